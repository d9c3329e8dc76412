"""bessemer.distributed across real processes: the launcher, every collective against NumPy (the
workers in tests/distributed/), and the ways a job fails. Each test starts its own job."""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bessemer.distributed._pmi import PMIServer
from bessemer.distributed.run import _mpich_library

HERE = Path(__file__).parent / "distributed"
LAUNCH = [sys.executable, "-m", "bessemer.distributed.run"]


def run(*args, timeout=240, **kw):
    t0 = time.monotonic()
    p = subprocess.run([*LAUNCH, *map(str, args)], capture_output=True, text=True, timeout=timeout, **kw)
    return p, time.monotonic() - t0


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_dtype_layout_and_device_against_numpy(n):
    p, _ = run("--nproc-per-node", n, HERE / "collectives.py")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    passed = re.findall(r"\[rank(\d)\]: rank \1: (\d+) checks passed", p.stdout)
    assert sorted(int(r) for r, _ in passed) == list(range(n)), p.stdout[-2000:]
    assert min(int(c) for _, c in passed) > 900


def test_launcher_sets_the_environment_and_prefixes_output():
    p, _ = run("--nproc-per-node", 3, HERE / "echo.py", "a", "--flag")
    assert p.returncode == 0, p.stderr
    for r in range(3):
        assert f"[rank{r}]: rank={r} world=3 env_rank={r} local={r} sum=3 args=a --flag" in p.stdout


def test_launcher_runs_a_module(tmp_path):
    (tmp_path / "pkg_echo.py").write_text((HERE / "echo.py").read_text())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    p, _ = run("--nproc-per-node", 2, "-m", "pkg_echo", "x", env=env)
    assert p.returncode == 0, p.stderr
    assert "[rank1]: rank=1 world=2 env_rank=1 local=1 sum=1 args=x" in p.stdout


def test_two_launchers_as_two_nodes():
    """--nnodes 2 on one machine: node 1's launcher joins node 0's rendezvous."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    common = ["--nnodes", "2", "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(port)]
    node0 = subprocess.Popen([*LAUNCH, *common, "--node-rank", "0", str(HERE / "echo.py")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    node1 = subprocess.Popen([*LAUNCH, *common, "--node-rank", "1", str(HERE / "echo.py")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    out0, err0 = node0.communicate(timeout=120)
    out1, err1 = node1.communicate(timeout=120)
    assert node0.returncode == 0 and node1.returncode == 0, err0 + err1
    assert "[rank1]: rank=1 world=4 env_rank=1 local=1 sum=6" in out0
    assert "[rank3]: rank=3 world=4 env_rank=3 local=1 sum=6" in out1


def run_without_launcher(*args, n=2):
    """The ranks under this process's own PMI service and no launcher: nobody stops a rank early, so each
    rank's own outcome is seen. Returns [(returncode, stdout, stderr)] by rank."""
    server = PMIServer("127.0.0.1", 0, 1, n, lambda rank, why: None)
    env = dict(os.environ)
    if "MPI4PY_LIBMPI" not in env and _mpich_library():  # as the launcher does: MPICH, not a system Open MPI
        env["MPI4PY_LIBMPI"] = _mpich_library()
    try:
        procs = [subprocess.Popen([sys.executable, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=dict(env, PMI_PORT=f"127.0.0.1:{server.port}", PMI_ID=str(r),
                                                      RANK=str(r), WORLD_SIZE=str(n)))
                 for r in range(n)]
        outs = [p.communicate(timeout=60) for p in procs]
        return [(p.returncode, *o) for p, o in zip(procs, outs)]
    finally:
        server.close()


@pytest.mark.parametrize("mode", ["mismatch", "mismatch_op", "mismatch_device"])
def test_a_mismatched_collective_raises_on_every_rank(mode):
    results = run_without_launcher(HERE / "failures.py", mode)
    lines = []
    for code, out, err in results:
        caught = [ln for ln in out.splitlines() if ln.startswith("caught: ")]
        assert code == 5 and len(caught) == 1, out + err
        lines.append(caught[0])
    # every rank names every rank's side (each under its own op's name)
    assert lines[0].split("collective: ")[1] == lines[1].split("collective: ")[1]
    if mode == "mismatch":
        assert "[all_reduce] the ranks disagree" in lines[0]
        assert "rank 0: all_reduce of bessemer.float32 (3, 2) on cpu" in lines[0]
        assert "rank 1: all_reduce of bessemer.float32 (4, 2) on cpu" in lines[0]
    elif mode == "mismatch_op":
        assert "rank 0: broadcast of" in lines[0] and "rank 1: all_reduce of" in lines[0]
    else:
        assert "rank 0: all_reduce of bessemer.float32 (2,) on cpu" in lines[0]
        assert "rank 1: all_reduce of bessemer.float32 (2,) on metal-sim" in lines[0]


@pytest.mark.parametrize("mode", ["raise", "kill"])
def test_launcher_stops_the_job_when_a_rank_fails(mode):
    p, took = run("--nproc-per-node", 3, HERE / "failures.py", mode, 600)
    assert p.returncode != 0
    why = "exit code 1" if mode == "raise" else "killed by SIGKILL"
    assert f"[bessemer.distributed.run] rank 1 failed ({why}); stopping the other processes" in p.stderr
    if mode == "raise":
        assert "[rank1]: RuntimeError: rank 1 fails before the collective" in p.stderr
    assert took < 30, took  # seconds, not the 600 s timeout


@pytest.mark.parametrize("mode", ["raise", "kill"])
def test_the_other_ranks_raise_within_the_timeout(mode):
    """Without a launcher stopping them, ranks whose peer died raise DistBackendError after `timeout`."""
    (code0, out0, err0), (code1, _, _) = run_without_launcher(HERE / "failures.py", mode, 3)
    assert code0 == 3, out0 + err0
    m = re.search(r"raised after ([\d.]+) s: \[all_reduce\] timed out after 3 s on rank 0 of 2", out0)
    assert m and 2.5 <= float(m.group(1)) < 10, out0
    assert code1 == (1 if mode == "raise" else -9)


def test_scripts_run_unchanged_under_mpiexec():
    """MPICH's own mpiexec (the mpich wheel installs it) starts the same script: the world comes from MPI."""
    beside = Path(sys.executable).parent / "mpiexec"  # the mpich wheel's, in this interpreter's environment
    mpiexec = str(beside) if beside.exists() else shutil.which("mpiexec")
    p = subprocess.run([mpiexec, "-n", "2", sys.executable, str(HERE / "echo.py")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "rank=1 world=2 env_rank=None local=None sum=1" in p.stdout


def test_not_initialized_and_bad_arguments_are_clear_errors():
    import bessemer.distributed as dist

    assert not dist.is_initialized()
    with pytest.raises(ValueError, match=r"\[get_rank\] the default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match=r"\[init_process_group\] unknown backend 'tcp'"):
        dist.init_process_group(backend="tcp")
    p, _ = run("--nproc-per-node", 0, HERE / "echo.py")
    assert p.returncode != 0 and "--nproc-per-node >= 1" in p.stderr


@pytest.mark.parametrize("n,device", [(2, "cpu"), (4, "cpu"), (2, "metal-sim")])
def test_ddp_training_equals_one_process_on_the_whole_batch(n, device, tmp_path):
    p, _ = run("--nproc-per-node", n, HERE / "ddp.py", device, tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for r in range(n):
        for acc in (False, True):
            assert f"[rank{r}]: rank {r}: accumulate={acc} matches one process" in p.stdout
        assert f"[rank{r}]: rank {r}: unused parameters reported and handled" in p.stdout
        assert f"[rank{r}]: rank {r}: checkpoint round trip" in p.stdout


@pytest.mark.parametrize("n,device", [(2, "cpu"), (4, "cpu"), (2, "metal-sim")])
def test_sync_batchnorm_trains_as_one_process_on_the_whole_batch(n, device):
    p, _ = run("--nproc-per-node", n, HERE / "syncbn.py", device)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for r in range(n):
        assert f"[rank{r}]: rank {r}: SyncBatchNorm matches one process" in p.stdout
        assert f"[rank{r}]: rank {r}: 3-D input normalised by the whole batch" in p.stdout


@pytest.mark.parametrize("n", [2, 4])
def test_object_collectives(n):
    p, _ = run("--nproc-per-node", n, HERE / "objects.py")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for r in range(n):
        for what in ("object collectives", "object collectives on a subgroup", "object collective errors"):
            assert f"[rank{r}]: rank {r}: {what}" in p.stdout, what


@pytest.mark.parametrize("device", ["cpu", "metal-sim"])
def test_new_group_collectives_sync_batchnorm_and_ddp_on_a_subgroup(device):
    p, _ = run("--nproc-per-node", 4, HERE / "groups.py", device)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for r in range(4):
        for what in ("subgroup collectives", "new_group mismatch raised", "SyncBatchNorm over a subgroup",
                     "DDP over a subgroup", "groups destroyed"):
            assert f"[rank{r}]: rank {r}: {what}" in p.stdout, what


@pytest.mark.parametrize("n,drop_last", [(10, False), (10, True), (3, False), (12, False)])
@pytest.mark.parametrize("replicas", [1, 3, 4])
def test_distributed_sampler_shares_like_torch(n, drop_last, replicas):
    """Without shuffle the ranks' indices are torch's exactly; with it, the same sizes and padding, and the
    same order on every rank (one permutation, seeded by seed + epoch)."""
    import torch.utils.data as tud

    from bessemer.utils.data import DistributedSampler

    data = list(range(n))
    for r in range(replicas):
        ours = DistributedSampler(data, replicas, r, shuffle=False, drop_last=drop_last)
        theirs = tud.DistributedSampler(data, replicas, r, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    for epoch in (0, 1):
        shares = []
        for r in range(replicas):
            s = DistributedSampler(data, replicas, r, shuffle=True, seed=7, drop_last=drop_last)
            s.set_epoch(epoch)
            shares.append(list(s))
            assert len(shares[-1]) == len(tud.DistributedSampler(data, replicas, r, drop_last=drop_last))
        merged = sorted(i for share in shares for i in share)
        if drop_last:
            assert len(set(merged)) == len(merged)  # no index twice
        else:
            assert set(merged) == set(data)  # every index, the padding repeating some
        if epoch == 0:
            first = shares
        elif n > 3:
            assert shares != first  # a new epoch, a new order
    with pytest.raises(ValueError, match=r"\[DistributedSampler\] invalid rank 3"):
        DistributedSampler(data, 3, 3)
    with pytest.raises(RuntimeError, match=r"\[DistributedSampler\] .* not initialized"):
        DistributedSampler(data)


def test_the_training_example_runs_data_parallel(tmp_path):
    """The README's command: examples/train_digits.py --distributed on two processes learns, and rank 0
    alone prints the epochs and writes the checkpoint."""
    example = Path(__file__).parent.parent / "examples" / "train_digits.py"
    p, _ = run("--nproc-per-node", 2, example, "--distributed", "--epochs", 2, "--out", tmp_path, "--no-plot")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    acc = re.search(r"\[rank0\]: final test accuracy ([\d.]+)", p.stdout)
    assert acc and float(acc.group(1)) > 0.9, p.stdout
    assert "[rank1]: epoch" not in p.stdout and "[rank1]: final" not in p.stdout
    assert (tmp_path / "checkpoint.bmckpt").exists()
