"""The CPU's vectorised float32 loops (csrc/cpu/isa.h: one copy per instruction set, picked at
startup): exp log sin cos tanh (shaders/bm_exp_f32.h, bm_log_trig_f32.h, activation.h, shared with
the shaders) within a few ulp of float64 on dense grids and on special values; lengths that leave
vector tails, strided views and in-place calls give the bits of the contiguous loop; and every copy
(BESSEMER_CPU_ISA=base, avx2, avx512, as the machine allows) computes the same bits (NaN being one
value), for the math, relu and the float32 arithmetic, the activations and their derivatives,
softmax, sum / mean, amax / amin with NaNs and the normalisations."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES, dense_grid, ulp_error


def _grid(lo, hi):
    return dense_grid(lo, hi, 400_001)


# (op, float64 reference, inputs, bound in ulp): the bounds measured over every float32 in range
# (tools/check_log.cpp, check_trig.cpp, fit_tanh.py's notes), rounded up
ACCURACY = [
    ("exp", np.exp, lambda: np.concatenate([_grid(-103, 88.7), _grid(-1, 1)]), 2.0),
    ("log", np.log, lambda: np.concatenate([_grid(1e-37, 3e38), _grid(0.5, 2), _grid(1e-45, 1e-37)]), 0.88),
    ("sin", np.sin, lambda: np.concatenate([_grid(-4, 4), _grid(-4096, 4096)]), 1.53),
    ("cos", np.cos, lambda: np.concatenate([_grid(-4, 4), _grid(-4096, 4096)]), 1.53),
    ("tanh", np.tanh, lambda: np.concatenate([_grid(-12, 12), _grid(-0.05, 0.05), _grid(-1e-30, 1e-30)]), 2.5),
]


@pytest.mark.parametrize("name,ref,inputs,bound", ACCURACY, ids=[a[0] for a in ACCURACY])
@pytest.mark.parametrize("device", DEVICES)
def test_float32_math_accuracy_in_ulps(device, name, ref, inputs, bound):
    x = inputs()
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    got = getattr(bm, name)(bm.tensor(x, device=device)).numpy()
    assert ulp_error(got, want) <= bound


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 1e-40, 1.17549435e-38, 3e38, -3e38,
                     88.72, 88.73, -103.97, -104.0, 4096.0, -4096.0, 4096.5, 1e5, -1e7, 1e30, 1.5707964, 3.1415927],
                    dtype=np.float32)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "sigmoid"])
@pytest.mark.parametrize("device", DEVICES)
def test_special_values_like_torch(device, name):
    # a vector's worth of specials at every offset: each lands in the vector loop and in the tail
    x = np.concatenate([np.roll(SPECIALS, k) for k in range(17)])
    got = getattr(bm, name)(bm.tensor(x, device=device)).numpy()
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want)), name
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=4 * 2.0**-23, atol=1e-37)
    if name in ("sin", "tanh"):  # odd functions keep the sign of zero
        zero = want == 0
        assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), name


OPS = {
    "exp": bm.exp, "log": lambda t: bm.log(bm.abs(t)), "sin": bm.sin, "cos": bm.cos, "tanh": bm.tanh,
    "sigmoid": bm.sigmoid, "silu": bm.nn.functional.silu, "gelu": bm.nn.functional.gelu,
    "gelu_tanh": lambda t: bm.nn.functional.gelu(t, approximate="tanh"),
}


@pytest.mark.parametrize("name", list(OPS))
def test_tails_views_and_in_place_match_the_contiguous_loop(name):
    rng = np.random.default_rng(5)
    fn = OPS[name]
    for n in list(range(1, 70)) + [255, 256, 257, 1000]:
        x = (rng.standard_normal(n) * 3).astype(np.float32)
        if n > 4:
            x[n // 3] = 5000.0  # beyond sin/cos's reduced range: its block takes the libm path
        whole = fn(bm.tensor(x)).numpy()
        # one value at a time (scalar path) gives the same bits as the vector loop
        singles = np.array([fn(bm.tensor(x[i:i + 1])).numpy()[0] for i in range(0, n, max(1, n // 7))])
        assert np.array_equal(singles.view(np.int32), whole[::max(1, n // 7)].view(np.int32), equal_nan=False)
    x = (rng.standard_normal((64, 48)) * 4).astype(np.float32)
    want = fn(bm.tensor(x)).numpy()
    t = bm.tensor(np.ascontiguousarray(x.T)).T  # transposed view of the same values
    assert np.array_equal(fn(t).numpy().view(np.int32), want.view(np.int32))
    big = bm.tensor(np.repeat(x, 2, axis=1))[:, ::2]  # step-sliced
    assert np.array_equal(fn(big).numpy().view(np.int32), want.view(np.int32))
    in_place = getattr(bm.tensor(x), name + "_", None)  # out == x: the loops read before they write
    if in_place is not None:
        y = bm.tensor(np.abs(x) if name == "log" else x.copy())  # OPS["log"] is log(|x|)
        getattr(y, name + "_")()
        assert np.array_equal(y.numpy().view(np.int32), want.view(np.int32))


# A block of 256 whose |x| all stay under the op's limit takes the reduced form (exp's normal-range
# form, sin/cos without the libm fallback, gelu without erfc's tail, log of positive normal floats):
# the same values in a block with one value outside (the breaker) take the full form, and both give
# the same bits. (op: (limit, breaker); OPS["log"] is log(|x|), so its breaker is 0.)
REDUCED = {"exp": (86.0, 200.0), "sigmoid": (86.0, 200.0), "silu": (86.0, 200.0), "gelu": (4.24, 10.0),
           "gelu_tanh": (9.0, 20.0), "sin": (4096.0, 9000.0), "cos": (4096.0, 9000.0), "log": (3e38, 0.0)}


@pytest.mark.parametrize("name", list(REDUCED))
def test_reduced_forms_give_the_full_forms_bits(name):
    rng = np.random.default_rng(17)
    limit, breaker = REDUCED[name]
    edges = [limit, -limit, 0.0, -0.0, 1e-45, -1e-30] if name != "log" else [3e38, 1.2e-38, 1.0, 2.0, 0.5]
    inside = np.concatenate([rng.uniform(-limit, limit, 4000), np.linspace(-limit, limit, 1001), edges])
    if name == "log":  # positive normal floats over every binade
        inside = np.concatenate([np.exp(rng.uniform(-87, 88, 5000)), edges])
    inside = inside.astype(np.float32)
    for start in range(0, inside.size, 255):
        x = inside[start:start + 255]
        reduced = OPS[name](bm.tensor(x)).numpy()  # one block, every |x| within the limit
        full = OPS[name](bm.tensor(np.append(x, np.float32(breaker)))).numpy()[:-1]
        assert np.array_equal(reduced.view(np.int32), full.view(np.int32)), f"{name} at block {start}"


def _derivative(fn):
    """x -> fn'(x) through autograd (the activation's backward kernel with a gradient of ones)."""
    def d(x: np.ndarray) -> np.ndarray:
        t = bm.tensor(x, requires_grad=True)
        fn(t).sum().backward()
        return t.grad.numpy()
    return d


# The derivatives' reduced forms in the same scheme: (limit, breaker) as REDUCED.
REDUCED_GRADS = {"gelu": (OPS["gelu"], 4.24, 10.0), "gelu_tanh": (OPS["gelu_tanh"], 9.0, 20.0),
                 "silu": (OPS["silu"], 86.0, 200.0)}


@pytest.mark.parametrize("name", list(REDUCED_GRADS))
def test_reduced_derivatives_give_the_full_forms_bits(name):
    fn, limit, breaker = REDUCED_GRADS[name]
    d = _derivative(fn)
    rng = np.random.default_rng(19)
    inside = np.concatenate([rng.uniform(-limit, limit, 3000), [limit, -limit, 0.0, -0.0, 1e-45]]).astype(np.float32)
    for start in range(0, inside.size, 255):
        x = inside[start:start + 255]
        reduced, full = d(x), d(np.append(x, np.float32(breaker)))[:-1]
        assert np.array_equal(reduced.view(np.int32), full.view(np.int32)), f"{name} at block {start}"


def test_softmax_blocks_in_exps_normal_range_give_the_full_forms_bits():
    # softmax's exp-sum takes exp's normal-range form for blocks of 64 whose |x - max| all stay within
    # 86. Row a's first block qualifies (its element 63 sits 80 below the max); row b's does not (100
    # below). exp of either rounds away in the sum, so every other output must have the same bits.
    rng = np.random.default_rng(23)
    base = rng.uniform(-5, 5, (4, 128)).astype(np.float32)
    for fn in (bm.softmax, bm.log_softmax):
        rows = []
        for gap in (80.0, 100.0):
            x = base.copy()
            x[:, 63] = x.max(axis=1) - np.float32(gap)
            rows.append(np.delete(fn(bm.tensor(x), -1).numpy(), 63, axis=1))
        assert np.array_equal(rows[0].view(np.int32), rows[1].view(np.int32)), fn.__name__


_CHILD = r"""
import json, sys
import numpy as np
import bessemer as bm
F = bm.nn.functional
rng = np.random.default_rng(11)
x = (rng.standard_normal(4133) * 4).astype(np.float32)
x[[7, 100, 2000]] = [np.nan, np.inf, 6000.0]
p = np.abs(x) + np.float32(1e-3)
m = rng.standard_normal((37, 1029)).astype(np.float32)
mn = m.copy(); mn[3, 17] = np.nan; mn[20, 1000] = np.nan; mn[:, 500] = np.nan
ms = rng.standard_normal((37, 260)).astype(np.float32); ms[2, 3] = np.nan; ms[4, ::2] = -0.0
def short_rows(op):  # rows shorter than a leaf's 32 lanes (masked loads; 16 at a time) and just past them
    ks = (1, 5, 8, 13, 16, 17, 31, 33, 47, 100, 256, 257)
    return bm.tensor(np.concatenate([getattr(bm.tensor(ms[:, :k]), op)(-1).numpy() for k in ks]))
hb = np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # every float16, and float32 bit patterns
fp = rng.integers(0, 1 << 32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
out = {"isa": bm._core.build_info()["cpu_isa"]}
def grad(fn, v):
    t = bm.tensor(v, requires_grad=True)
    fn(t).sum().backward()
    return t.grad
for name, v in [("exp", bm.exp(bm.tensor(x))), ("log", bm.log(bm.tensor(p))), ("sin", bm.sin(bm.tensor(x))),
                ("cos", bm.cos(bm.tensor(x))), ("tanh", bm.tanh(bm.tensor(x))), ("sigmoid", bm.sigmoid(bm.tensor(x))),
                ("silu", F.silu(bm.tensor(x))), ("gelu", F.gelu(bm.tensor(x))),
                ("gelu_tanh", F.gelu(bm.tensor(x), approximate="tanh")), ("relu", bm.relu(bm.tensor(x))),
                ("div", bm.tensor(x) / bm.tensor(p)), ("mul_scalar", bm.tensor(x) * 1.7), ("rsub", 1.5 - bm.tensor(x)),
                ("gelu_grad", grad(F.gelu, x)), ("silu_grad", grad(F.silu, x)),
                ("gelu_tanh_grad", grad(lambda t: F.gelu(t, approximate="tanh"), x)),
                ("softmax", bm.softmax(bm.tensor(m), -1)), ("log_softmax", bm.log_softmax(bm.tensor(m), -1)),
                ("softmax0", bm.softmax(bm.tensor(m), 0)),
                ("amax", bm.tensor(m).amax(-1)), ("amin0", bm.tensor(m).amin(0)), ("amax_all", bm.tensor(m).amax()),
                ("amax_nan", bm.tensor(mn).amax(-1)), ("amin_nan0", bm.tensor(mn).amin(0)),
                ("sum", bm.tensor(m).sum(-1)), ("sum0", bm.tensor(m).sum(0)), ("sum_all", bm.tensor(m).sum()),
                ("mean", bm.tensor(m).mean(-1)), ("sum_short", short_rows("sum")),
                ("f16_to_f32", bm.tensor(hb).to(bm.float32)),
                ("f32_to_f16", bm.tensor(fp).to(bm.float16).to(bm.float32)),
                ("f32_to_bf16", bm.tensor(fp).to(bm.bfloat16).to(bm.float32)), ("amax_short", short_rows("amax")),
                ("amin_short", short_rows("amin")), ("sum_long", bm.tensor(x[np.isfinite(x)]).sum()),
                ("layer_norm", F.layer_norm(bm.tensor(m), (1029,))),
                ("batch_norm", F.batch_norm(bm.tensor(m.reshape(37, 3, 343)), None, None, training=True))]:
    a = v.numpy().copy()
    a[np.isnan(a)] = np.nan  # a NaN's sign and payload are not part of the result
    out[name] = a.view(np.int32).ravel().tolist()
json.dump(out, sys.stdout)
"""


def _run_child(isa: str) -> dict:
    env = dict(os.environ, BESSEMER_CPU_ISA=isa, BESSEMER_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def _expected_isa() -> str:
    """The copy bessemer must pick: the widest the CPU reports in /proc/cpuinfo on x86-64 Linux
    (the baseline on other machines, which build only that copy, and on macOS x86-64, where the
    wider copies are not checked here), lowered to BESSEMER_CPU_ISA when that asks for less."""
    flags: set[str] = set()
    if platform.machine() in ("x86_64", "AMD64"):
        if not os.path.exists("/proc/cpuinfo"):
            return bm._core.build_info()["cpu_isa"]
        with open("/proc/cpuinfo") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    order = ["base", "avx2", "avx512"]
    cpu = ("avx512" if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags
           else "avx2" if {"avx2", "fma"} <= flags else "base")
    want = os.environ.get("BESSEMER_CPU_ISA", "")
    return want if want in order and order.index(want) < order.index(cpu) else cpu


def test_every_instruction_set_copy_computes_the_same_bits():
    base = _run_child("base")
    assert base["isa"] == "base"
    best = bm._core.build_info()["cpu_isa"]
    assert best == _expected_isa(), "the copy picked at startup is not the widest this CPU runs"
    # Every wider copy this CPU runs against the baseline (none on a baseline-only CPU, where the
    # assertion above is the check).
    others = [i for i in ("avx2", "avx512") if i == best or (i == "avx2" and best == "avx512")]
    for isa in others:
        got = _run_child(isa)
        assert got["isa"] == isa
        for k, v in base.items():
            assert k == "isa" or got[k] == v, f"{k}: the {isa} copy differs from the baseline"
