// Deliberate memory errors and undefined behaviour, built only with -DBESSEMER_SANITIZE (see
// CMakeLists.txt). tools/sanitize.sh runs each one and expects the sanitizer's report: that proves
// the build under test is instrumented and that a report fails the run. Never in a normal build.
#pragma once
#include <string>

namespace bm {

// Runs the named fault: "heap-overflow", "use-after-free", "leak", "signed-overflow", "fiber-stack"
// (an overflow of a stack array in a simulator lane). Returns only where the sanitizer let it
// through (a leak is reported at exit); throws ValueError for an unknown kind.
int sanitizer_control(const std::string& kind);

}  // namespace bm
