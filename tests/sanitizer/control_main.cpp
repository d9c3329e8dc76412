// bessemer_sanitizer_control <kind>: runs one deliberate fault from core/sanitizer_control.h in a
// plain C++ program built like the C++ tests. tools/sanitize.sh expects each to end in a sanitizer
// report, proving the ctest binaries are instrumented too. Built only with -DBESSEMER_SANITIZE.
#include <cstdio>
#include <exception>

#include "core/sanitizer_control.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s heap-overflow|use-after-free|leak|signed-overflow|fiber-stack\n", argv[0]);
    return 2;
  }
  try {
    return bm::sanitizer_control(argv[1]) == 12345 ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
