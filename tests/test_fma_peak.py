"""bm._core._fma_peak_gflops, the benchmarks' measured FMA peak (csrc/cpu/fma_peak.cpp): a finite
positive rate from every instruction-set copy this CPU runs, and a clear error for a bad duration.
(How fast is for the benchmarks to report, not for a test to time.)"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

import bessemer as bm

PROBE = "import bessemer as bm; print(bm._core._fma_peak_gflops(0.02), bm._core.build_info()['cpu_isa'])"


@pytest.mark.parametrize("isa", ["base", "avx2", "avx512"])
def test_every_copy_measures_a_finite_positive_rate(isa):
    env = dict(os.environ, BESSEMER_CPU_ISA=isa)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    rate, ran = out.stdout.split()
    assert math.isfinite(float(rate)) and float(rate) > 0.0
    # A copy the CPU lacks falls back to a lower one; the rate is the copy that ran.
    assert ran in ("base", "avx2", "avx512")


@pytest.mark.parametrize("seconds", [0.0, -1.0, 61.0, float("nan")])
def test_bad_duration_names_the_function(seconds):
    with pytest.raises(ValueError, match=r"^\[_fma_peak_gflops\] expected seconds in \(0, 60\]"):
        bm._core._fma_peak_gflops(seconds)
