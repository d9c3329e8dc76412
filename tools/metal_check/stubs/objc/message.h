// Stub for the metal-cpp syntax check. Everything else metal-cpp needs from the Objective-C
// runtime (SEL, objc_object, sel_registerName, objc_lookUpClass, objc_getProtocol) comes from
// Debian's GNU libobjc headers; the GNU runtime has no objc_msgSend family, declared here as
// Apple declares them (metal-cpp casts them to the right function type at each call).
#pragma once
#include <objc/runtime.h>
extern "C" {
void objc_msgSend(void);
void objc_msgSend_stret(void);
void objc_msgSend_fpret(void);
}
