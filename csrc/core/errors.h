// Typed errors. The bindings translate each to a Python exception; messages start with "[op]".
#pragma once
#include <stdexcept>
#include <string>

namespace bm {

struct Error : std::runtime_error { using std::runtime_error::runtime_error; };   // RuntimeError
struct DeviceMismatchError : Error { using Error::Error; };                        // bm.DeviceMismatchError
struct UnsupportedError : Error { using Error::Error; };                           // bm.UnsupportedError
struct ValueError : Error { using Error::Error; };
struct IndexError : Error { using Error::Error; };
struct TypeError : Error { using Error::Error; };
struct OutOfMemoryError : Error { using Error::Error; };                           // MemoryError
struct ZeroDivisionError : Error { using Error::Error; };                          // ZeroDivisionError
struct RaceError : Error { using Error::Error; };  // bm.RaceError: the simulator's race detector

}  // namespace bm
