#!/usr/bin/env bash
# bessemer.distributed on the GPU machine (the device tool's H200 kinds), where nothing can be
# installed from a registry. Here, first fetch the wheels it needs for the host's Python 3.12:
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --no-deps \
#     "mpi4py>=4.0" "mpich>=4.2" "scipy-openblas32>=0.3.27" -d .whl
# then run `bash tools/gpu_distributed.sh` there with carry [".whl"] (.whl/ is git-ignored). Logs go
# under $OUT. With one GPU it runs the distributed tests with their cuda cases and the workers on cuda
# (NCCL at world size 1; several ranks on one GPU fall back to MPI, as NCCL refuses them); with two or
# more it also runs every collective over NCCL across GPUs, the bandwidth benchmark against torch's
# NCCL, and ResNet-18 data-parallel training against one GPU (issue 14's targets).
set -u
OUT=${OUT:-/tmp/gpu_distributed}
mkdir -p "$OUT"
pip install -q --no-index --no-deps --prefix /tmp/pfx .whl/*.whl > "$OUT/pip.log" 2>&1 || tail -5 "$OUT/pip.log"
site=$(find /tmp/pfx -type d -name "*-packages" | head -1)
export PYTHONPATH=$site:$PWD/python PATH=/tmp/pfx/bin:/tmp/pfx/local/bin:$PATH
# The host has a system Open MPI; the ranks must load the mpich wheel's library (the launcher does
# this itself; mpiexec-started tests need it set).
MPI4PY_LIBMPI=$(ls /tmp/pfx/local/lib/libmpi.so.12 /tmp/pfx/lib/libmpi.so.12 2>/dev/null | head -1)
export MPI4PY_LIBMPI
gpus=$(nvidia-smi -L | wc -l)
echo "GPUs: $gpus"
t0=$SECONDS
BUILD_TESTS=OFF tools/build-inplace > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS - t0)) s"
python -m bessemer | tee "$OUT/info.txt"
run() {  # run <name> <command...>: the command's output in $OUT/<name>.log, its status and tail here
  local name=$1
  shift
  "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: exit $?"
  tail -n "${TAIL:-4}" "$OUT/$name.log"
}
launch() { python -m bessemer.distributed.run "$@"; }
run tests python -m pytest -q -p no:cacheprovider tests/test_distributed.py tests/test_sync_batchnorm.py \
  tests/test_autograd_function.py tests/test_autograd_hooks.py
n=$(( gpus >= 2 ? gpus : 2 ))
run collectives launch --nproc-per-node "$n" tests/distributed/collectives.py
run ddp launch --nproc-per-node "$n" tests/distributed/ddp.py cuda "$OUT"
run syncbn launch --nproc-per-node "$n" tests/distributed/syncbn.py cuda
run groups launch --nproc-per-node 4 tests/distributed/groups.py cuda
if [ "$gpus" -ge 2 ]; then
  for k in 2 4 8; do
    [ "$k" -le "$gpus" ] || break
    TAIL=20 run "bandwidth_$k" python benchmarks/bench_distributed.py --nproc "$k" --cuda
  done
  TAIL=8 run resnet python benchmarks/bench_ddp_resnet.py --device cuda --gpus 2 --batch 64 --steps 20
  TAIL=8 run resnet_syncbn python benchmarks/bench_ddp_resnet.py --device cuda --gpus 2 --batch 64 --steps 20 \
    --sync-bn 1
fi
