#!/usr/bin/env bash
# The CPU benchmarks as issue 13 measures them: one process pinned to two cores (taskset), every
# benchmark once with OPENBLAS_CORETYPE unset (what users have), and the BLAS-bound ones (matmul,
# linear, ResNet-18) again with OPENBLAS_CORETYPE=Haswell. Run after tools/build-inplace:
#     benchmarks/pinned.sh [OUTDIR]        # logs in OUTDIR (default bench-logs/), ratios printed
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-logs}
mkdir -p "$out"
export PYTHONPATH=$PWD/python:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH}
cores=$(python3 -c "import os; print(','.join(map(str, sorted(os.sched_getaffinity(0))[:2])))")
summary() { grep -E "vs torch|logits" "$1" | sed -E 's/\| bessemer.*(vs torch)/ \1/' | cut -c1-130; }
unset OPENBLAS_CORETYPE
for b in elementwise reduce nn_misc nn matmul; do
  echo "== $b (cores $cores, OPENBLAS_CORETYPE unset)"
  taskset -c "$cores" python3 benchmarks/run.py "$b" > "$out/$b.log" 2>&1 || echo "   failed: see $out/$b.log"
  summary "$out/$b.log"
done
export OPENBLAS_CORETYPE=Haswell
for b in matmul nn_misc; do
  echo "== $b (cores $cores, OPENBLAS_CORETYPE=Haswell)"
  taskset -c "$cores" python3 benchmarks/run.py "$b" > "$out/${b}_haswell.log" 2>&1 || echo "   failed: see $out/${b}_haswell.log"
  summary "$out/${b}_haswell.log"
done
echo "== resnet18 (cores $cores, OPENBLAS_CORETYPE=Haswell)"
taskset -c "$cores" python3 -c "import bench_nn; bench_nn.bench_resnet18()" > "$out/resnet_haswell.log" 2>&1
summary "$out/resnet_haswell.log"
