#!/usr/bin/env bash
# The CUDA target on a machine with an NVIDIA GPU (not run by CI, which has no GPU): builds in
# place with BESSEMER_CUDA=ON, runs the whole suite (every device, cuda:0 included), then
# benchmarks/bench_cuda.py, then compute-sanitizer's memcheck, racecheck, synccheck and initcheck
# (side by side) over the tests that launch every kernel the suite launched on cuda:0
# (tools/kernel_cover.py: ~870 tests cover ~1250 kernels). Logs go to $OUT (default ./cuda_check_logs).
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
export PYTHONPATH=$R/python:$R/tools${PYTHONPATH:+:$PYTHONPATH}
N=$(( $(nproc) > 14 ? 14 : $(nproc) ))
# Every module compiled once, in parallel, into the module cache the test workers then read.
python3 -c "from bessemer import _core; _core._cuda_compile_shaders('sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)', [], 0, True)"
# The suite, logging which kernels each test launches (tools/kernel_cover.py)...
rm -rf "$OUT/klog"
BESSEMER_KERNEL_LOG=$OUT/klog python3 -m pytest -q -p no:cacheprovider -p no:benchmark -p kernel_cover -n "$N" tests 2>&1 \
  | tee "$OUT/suite.log" | tail -5
# ...then the fewest tests that launch every kernel the suite launched on cuda:0, under each tool.
python3 tools/kernel_cover.py pick "$OUT/klog" --device cuda:0 -o "$OUT/cover.txt"
python3 benchmarks/bench_cuda.py --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" | tail -12
rc=0
for tool in memcheck racecheck synccheck initcheck; do
  compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 30 \
    python3 tools/kernel_cover.py run "$OUT/cover.txt" > "$OUT/san_$tool.log" 2>&1 &
done
for job in $(jobs -p); do wait "$job" || rc=$?; done
for tool in memcheck racecheck synccheck initcheck; do
  echo "compute-sanitizer $tool: $(grep -E 'passed|failed|ERROR SUMMARY' "$OUT/san_$tool.log" | tail -2 | tr '\n' ' ')"
done
exit $rc
