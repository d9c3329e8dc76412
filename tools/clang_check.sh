#!/usr/bin/env bash
# Syntax-check every C++ source with clang in C++17 mode. macOS builds with (Apple) clang, which
# rejects things gcc accepts (e.g. lambdas capturing structured bindings); this catches them here.
# The checks run in parallel, one per core (JOBS= to change): CI's time limit counts this step too.
set -euo pipefail
cd "$(dirname "$0")/.."
blas_inc=$(python -c "import scipy_openblas32 as s; print(s.get_include_dir())")
py_inc=$(python -c "import sysconfig; print(sysconfig.get_paths()['include'])")
pyb_inc=$(python -c "import pybind11; print(pybind11.get_include())")
# The CUDA sources need the toolkit's cuda.h, found the way CMake's FindCUDAToolkit finds it (beside
# nvcc, CUDA_HOME or /usr/local/cuda); without a toolkit the build leaves them out and so does this.
cuda_inc=""
for d in "${CUDA_HOME:-}" "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/x)")")" /usr/local/cuda; do
  if [ -n "$d" ] && [ -f "$d/include/cuda.h" ]; then cuda_inc="$d/include"; break; fi
done

# One line per check: "<label>\t<clang arguments...>"; xargs runs them JOBS at a time.
jobs=()
for f in csrc/core/*.cpp csrc/autograd/*.cpp csrc/cpu/*.cpp csrc/cpu/isa/*.cpp csrc/metal/*.cpp csrc/msl_sim/*.cpp csrc/cuda/*.cpp csrc/bindings/*.cpp; do
  case "$f" in *runtime_metal.cpp) continue ;; esac  # checked against metal-cpp by tools/metal_check
  extra=""
  case "$f" in
    csrc/cpu/isa/*avx2*) extra="-mavx2 -mfma" ;;  # as CMakeLists.txt builds them
    csrc/cpu/conv_winograd.cpp) extra="-DBESSEMER_WINOGRAD_AVX2" ;;
    csrc/cuda/*|*runtime_cuda.cpp)
      if [ -z "$cuda_inc" ]; then echo "clang_check: no CUDA toolkit, $f left out (as the build does)"; continue; fi
      extra="-I$cuda_inc -DBESSEMER_HAVE_CUDA" ;;
  esac
  jobs+=("$f	-Icsrc -Ishaders -I$blas_inc -I$py_inc -I$pyb_inc -DBESSEMER_BLAS_SCIPY_OPENBLAS -DBESSEMER_VERSION=\"check\" -DBESSEMER_BLAS_NAME=\"check\" -DBESSEMER_BUILD_TYPE=\"check\" $extra $f")
done
# The ISA-variant sources (bessemer_isa_variants in CMakeLists.txt, csrc/cpu/isa.h) are compiled once
# more per instruction set, as the build does on x86-64.
isa_sources=""
[ "$(uname -m)" = x86_64 ] && isa_sources=$(grep -l "^namespace bm::cpu::BM_ISA_NS" csrc/cpu/*.cpp)
for f in $isa_sources; do
  jobs+=("$f (avx2 copy)	-Icsrc -Ishaders -DBESSEMER_ISA_VARIANTS=1 -DBM_ISA=avx2 -mavx2 -mfma -ffp-contract=off $f")
  jobs+=("$f (avx512 copy)	-Icsrc -Ishaders -DBESSEMER_ISA_VARIANTS=1 -DBM_ISA=avx512 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma -ffp-contract=off $f")
done

check_one() {  # $1: "<label>\t<arguments>" (no argument holds a space)
  local label=${1%%$'\t'*} args=${1#*$'\t'}
  # shellcheck disable=SC2086 # the arguments are split on purpose
  if ! clang++ -std=c++17 -fsyntax-only -Wno-unknown-attributes $args; then
    echo "clang_check: $label failed" >&2
    return 1
  fi
}
export -f check_one
if printf '%s\n' "${jobs[@]}" | xargs -d '\n' -P "${JOBS:-$(nproc)}" -I{} bash -c 'check_one "$1"' _ {}; then
  echo "clang_check: every source compiles with clang (C++17), ${#jobs[@]} checks"
else
  exit 1
fi
