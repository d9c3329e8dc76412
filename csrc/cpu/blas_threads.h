// The BLAS library's own thread pool, kept apart from blas.h so callers need no BLAS headers.
#pragma once

namespace bm::cpu {

// bm.set_num_threads(n) also sizes the BLAS pool, as torch.set_num_threads does. Accelerate
// schedules its own threads (VECLIB_MAXIMUM_THREADS at start-up), so there it is a no-op.
void set_blas_threads(int n);
int blas_threads();  // 0 where the library does not say (Accelerate)

}  // namespace bm::cpu
