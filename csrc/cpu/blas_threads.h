// How many threads the BLAS library itself runs, kept apart from blas.h so callers need no BLAS
// headers.
#pragma once

namespace bm::cpu {

// OpenBLAS: 1 (blas.cpp splits products across bessemer's pool instead, so bm.set_num_threads
// sizes the one pool there is). 0 where the library does not say (Accelerate, which schedules
// its own threads).
int blas_threads();

}  // namespace bm::cpu
