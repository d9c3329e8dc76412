#!/usr/bin/env bash
# The CUDA target on a machine with an NVIDIA GPU (not run by CI, which has no GPU): builds in
# place with BESSEMER_CUDA=ON, runs the whole suite (every device, cuda:0 included), then
# compute-sanitizer's memcheck, racecheck, synccheck and initcheck over the shader tests on cuda,
# then benchmarks/bench_cuda.py. Logs go to $OUT (default ./cuda_check_logs).
#
#   tools/cuda_gpu_check.sh                  # everything
#   SAN_K="cuda and float16" tools/cuda_gpu_check.sh   # another sanitizer slice
#
# The sanitizers run one process each (14 instrumented xdist workers each compiling every module
# is far slower), after a plain run has filled the module cache (~/.cache/bessemer/cuda).
set -o pipefail
export PYTHONUNBUFFERED=1
R=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$R/cuda_check_logs}
mkdir -p "$OUT"
cd "$R"
uname -r; nvidia-smi -L; compute-sanitizer --version | tail -1
PB=$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')
cmake -S . -B build/cuda -G Ninja -DBESSEMER_BUILD_TESTS=OFF -DBESSEMER_INPLACE=ON -DBESSEMER_CUDA=ON \
  -Dpybind11_DIR="$PB" > "$OUT/build.log" 2>&1 && cmake --build build/cuda -j"$(nproc)" >> "$OUT/build.log" 2>&1 \
  || { echo "build failed: $OUT/build.log"; exit 1; }
export PYTHONPATH=$R/python${PYTHONPATH:+:$PYTHONPATH}
N=$(( $(nproc) > 14 ? 14 : $(nproc) ))
python3 -m pytest -q -p no:cacheprovider -p no:benchmark -n "$N" tests 2>&1 | tee "$OUT/suite.log" | tail -5
SEL="tests/test_ops.py tests/test_softmax_act_backward.py tests/test_metal_reduce.py tests/test_norm.py
     tests/test_matmul.py tests/test_conv.py tests/test_pool.py"
K=${SAN_K:-cuda and float32 and (contiguous or not test_op)}
rc=0
for tool in memcheck racecheck synccheck initcheck; do
  # shellcheck disable=SC2086
  compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 30 \
    python3 -m pytest -q -p no:cacheprovider -p no:benchmark -k "$K" $SEL > "$OUT/san_$tool.log" 2>&1
  r=$?; [ $r -ne 0 ] && rc=$r
  echo "compute-sanitizer $tool: exit $r; $(grep -E 'passed|failed|ERROR SUMMARY|hazard' "$OUT/san_$tool.log" | tail -2 | tr '\n' ' ')"
done
python3 benchmarks/bench_cuda.py --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" | tail -12
exit $rc
