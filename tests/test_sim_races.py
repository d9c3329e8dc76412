"""The simulator's race detector and shuffle mode seen from Python (bessemer.metal_sim).

The control kernels live in csrc/msl_sim/controls/race_controls.metal; the C++ tests
(tests/cpp/test_msl_sim_races.cpp) check every control, these check the Python side: the
exception type, the message, the switches and the environment variables.
"""

import os
import pathlib
import subprocess
import sys

import pytest

import bessemer as bm
from bessemer import _core, metal_sim

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONTROLS = "csrc/msl_sim/controls/race_controls.metal"
SOURCE = (ROOT / CONTROLS).read_text().splitlines()


def line_of(statement, after=None):
    """The 1-based line of the first `statement` in the controls file (after the line `after`)."""
    start = 0 if after is None else SOURCE.index(after)
    for i in range(start, len(SOURCE)):
        if SOURCE[i].strip() == statement:
            return i + 1
    raise AssertionError(f"{statement!r} not in {CONTROLS}")


@pytest.fixture(autouse=True)
def detector_on():
    """Each test starts with the detector on and shuffling off, and leaves the settings as found."""
    race, seed = metal_sim.race_check(), metal_sim.shuffle()
    metal_sim.set_race_check(True)
    metal_sim.set_shuffle(None)
    yield
    metal_sim.set_race_check(race)
    metal_sim.set_shuffle(seed)


def run(name, threads=64, group=64, nbuffers=1):
    return _core._sim_run_control(name, threads, group, nbuffers)


def test_missing_barrier_is_a_race_error_naming_kernel_variable_lanes_and_lines():
    assert issubclass(bm.RaceError, RuntimeError)
    with pytest.raises(bm.RaceError) as info:
        run("missing_barrier")
    m = str(info.value)
    head = 'kernel void missing_barrier('
    kernel_start = next(i for i, s in enumerate(SOURCE) if head in s)
    write = line_of("partial[lid] = left + partial[lid];", SOURCE[kernel_start])
    read = line_of("uint left = lid > 0 ? partial[lid - 1] : 0;", SOURCE[kernel_start])
    assert m.startswith("[msl-sim] data race in kernel 'msl_sim_control_missing_barrier'")
    assert "threadgroup variable 'partial'" in m
    assert f"lane 1 wrote it at {CONTROLS}:{write} and lane 2 read it at {CONTROLS}:{read}" in m
    assert "no threadgroup_barrier(mem_flags::mem_threadgroup) between" in m
    out = run("missing_barrier_fixed")[0]
    assert out == [1] + [2 * i + 1 for i in range(1, 64)]


def test_read_before_write_and_racing_device_write():
    with pytest.raises(bm.RaceError, match="read of uninitialised threadgroup memory") as info:
        run("read_before_write")
    assert "threadgroup variable 'scratch'" in str(info.value)
    assert f"lane 0 read it at {CONTROLS}:{line_of('out[lid] = scratch[n - 1 - lid];')}" in str(info.value)
    assert run("read_before_write_fixed")[0] == list(range(63, -1, -1))

    with pytest.raises(bm.RaceError) as info:
        run("racing_device_write", 32, 16)
    m = str(info.value)
    store = line_of("out[gid % 16] = gid + 1;")
    assert "on buffer(0) (byte 0 of 128)" in m
    assert (
        f"thread (0,0,0) of threadgroup (0,0,0) wrote it at {CONTROLS}:{store} and "
        f"thread (16,0,0) of threadgroup (1,0,0) wrote it at {CONTROLS}:{store}"
    ) in m
    assert run("racing_device_write_fixed", 32, 16)[0][:16] == [2 * i + 18 for i in range(16)]


def test_switching_the_detector_off():
    metal_sim.set_race_check(False)
    assert not metal_sim.race_check()
    run("missing_barrier")  # no report
    metal_sim.set_race_check(True)
    with pytest.raises(bm.RaceError):
        run("missing_barrier")


def test_shuffle_changes_a_lane_order_dependent_result_reproducibly():
    n = 128
    assert run("lane_order", n, n, 2)[0] == list(range(n))
    with metal_sim.shuffled(7):
        assert metal_sim.shuffle() == 7
        a = run("lane_order", n, n, 2)[0]
    with metal_sim.shuffled(7):
        b = run("lane_order", n, n, 2)[0]
    assert metal_sim.shuffle() is None
    assert a != list(range(n)) and sorted(a) == list(range(n))
    assert a == b
    with metal_sim.shuffled(7):
        assert run("lane_order_fixed", n, 32)[0] == list(range(n))
    with pytest.raises(ValueError, match="non-negative"):
        metal_sim.set_shuffle(-1)


def test_ops_give_the_same_numbers_shuffled():
    x = bm.randn(3, 200, device="metal-sim")
    w = bm.randn(200, 40, device="metal-sim")
    ref = [bm.softmax(x, dim=1).numpy(), (x @ w).numpy(), x.sum(dim=1).numpy()]
    with metal_sim.shuffled(3):
        got = [bm.softmax(x, dim=1).numpy(), (x @ w).numpy(), x.sum(dim=1).numpy()]
    for g, r in zip(got, ref):
        assert (g == r).all()


@pytest.mark.parametrize(
    ("env", "expect"),
    [
        ({"BESSEMER_SIM_RACECHECK": "0"}, "False None"),
        ({"BESSEMER_SIM_RACECHECK": "1", "BESSEMER_SIM_SHUFFLE": "42"}, "True 42"),
        ({}, "True None"),
    ],
)
def test_environment_variables(env, expect):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BESSEMER_SIM_")}
    code = "from bessemer import metal_sim as s; print(s.race_check(), s.shuffle())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == expect
