// Stub for the metal-cpp syntax check (tools/metal_check): the CoreFoundation names metal-cpp's
// headers use. The real header also brings in <math.h> (Metal's headers use INFINITY).
#pragma once
#include <math.h>
#include <stdint.h>
typedef double CFTimeInterval;
