"""The same expression, two engines: bessemer on every device against NumPy (float64 references).

`make_input` builds a bessemer tensor *and* the numpy array holding the same values, in one of the
layouts every kernel must handle. `check_op` runs an op on both and compares.
"""

from __future__ import annotations

import numpy as np

import bessemer as bm
from bessemer.testing import assert_close

DEVICES = [str(d) for d in bm.available_devices()]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d", "empty"]
FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
INTS = [bm.int32, bm.int64, bm.int8, bm.uint8, bm.int16]
SMALL_INTS = [bm.int8, bm.uint8, bm.int16]  # integer results wrap to these widths (torch's semantics)
NUMPY_DTYPE = {bm.bool: np.bool_, bm.int8: np.int8, bm.uint8: np.uint8, bm.int16: np.int16, bm.int32: np.int32,
               bm.int64: np.int64, bm.float16: np.float16, bm.float32: np.float32, bm.float64: np.float64}
ALL_DTYPES = FLOATS + INTS + [bm.bool]

# Tolerances for a result computed in `dtype` against a float64 reference.
TOL = {
    bm.float64: (1e-10, 1e-12),
    bm.float32: (2e-5, 1e-5),
    bm.float16: (2e-3, 1e-3),
    bm.bfloat16: (1.6e-2, 1e-2),
    bm.int32: (0, 0),
    bm.int64: (0, 0),
    bm.int8: (0, 0),
    bm.uint8: (0, 0),
    bm.int16: (0, 0),
    bm.bool: (0, 0),
}


def dtypes_on(device: str, dtypes):
    """float64 exists on cpu only."""
    return [d for d in dtypes if d != bm.float64 or device == "cpu"]


def round_to(values: np.ndarray, dtype) -> np.ndarray:
    """Values exactly representable in `dtype`, as float64/int64/bool numpy data."""
    if dtype == bm.bool:
        return values.astype(bool)
    if dtype in INTS:
        return np.round(values).astype(np.int64)
    if dtype == bm.float16:
        return values.astype(np.float16).astype(np.float64)
    if dtype == bm.bfloat16:
        bits = values.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(np.float32).astype(np.float64)
    if dtype == bm.float32:
        return values.astype(np.float32).astype(np.float64)
    return values.astype(np.float64)


def ulp_error(got: np.ndarray, want64: np.ndarray) -> float:
    """Largest error of float32 results in ulps of the float64 reference (rounded to float32),
    over the elements whose reference is finite in float32."""
    w32 = want64.astype(np.float32)
    ok = np.isfinite(w32)
    spacing = np.spacing(np.abs(w32[ok])).astype(np.float64)
    return float(np.max(np.abs(got[ok].astype(np.float64) - want64[ok]) / spacing))


def dense_grid(lo, hi, n=200_001) -> np.ndarray:
    """n evenly spaced float32 points from lo to hi (computed in float64, then rounded)."""
    return np.linspace(lo, hi, n, dtype=np.float64).astype(np.float32)


def random_values(shape, dtype, rng: np.random.Generator, domain: str = "any") -> np.ndarray:
    if dtype == bm.bool:
        return rng.random(shape) < 0.5
    if domain == "pos":
        v = rng.uniform(0.1, 4.0, shape)
    elif domain == "small":
        v = rng.uniform(-3, 3, shape)
    elif domain == "exp":  # exponents for pow
        v = rng.integers(0, 4, shape).astype(np.float64)
    elif domain == "unit":  # inside (-1, 1), for erfinv; integers round to -1, 0, 1
        v = rng.uniform(-0.999, 0.999, shape)
    else:
        v = rng.standard_normal(shape) * (5 if dtype in INTS else 2)
    if dtype == bm.uint8:  # unsigned: the same magnitudes, none negative
        v = np.abs(v)
    return round_to(v, dtype)


def _np_storage(values: np.ndarray, dtype):
    """numpy array usable as bessemer input data (bfloat16 goes through float32)."""
    if dtype == bm.bfloat16:
        return values.astype(np.float32)
    return values.astype(NUMPY_DTYPE[dtype])


def make_input(shape, dtype, device: str, layout: str, rng: np.random.Generator, domain: str = "any"):
    """(bessemer tensor, numpy array with the same values) with the requested memory layout.

    Shapes are logical shapes; layouts other than 0d/empty keep `shape` unless it cannot hold them.
    """
    shape = tuple(shape)
    if layout == "0d":
        shape = ()
    elif layout == "empty":
        shape = shape[:-1] + (0,) if shape else (0,)

    def build(base_shape):
        vals = random_values(base_shape, dtype, rng, domain)
        return vals, bm.tensor(_np_storage(vals, dtype), dtype=dtype, device=device)

    if layout in ("contiguous", "0d", "empty") or len(shape) == 0:
        vals, t = build(shape)
        return t, vals
    if layout == "transposed":
        if len(shape) == 1:  # a 1-D "transpose": a column of a transposed 2-D matrix
            vals, t = build((3, shape[0]))
            return t.T[:, 1], vals.T[:, 1]
        base = shape[:-2] + (shape[-1], shape[-2])
        vals, t = build(base)
        return t.transpose(-1, -2), np.swapaxes(vals, -1, -2)
    if layout == "sliced":
        base = tuple(2 * s + 1 for s in shape)
        vals, t = build(base)
        idx = tuple(slice(1, None, 2) for _ in shape)
        return t[idx], vals[idx]
    if layout == "offset":
        n = int(np.prod(shape))
        vals, t = build((n + 5,))
        return t[5:].reshape(shape), vals[5:].reshape(shape)
    if layout == "broadcast":  # zero strides on every dim but the last
        base = (1,) * (len(shape) - 1) + shape[-1:]
        vals, t = build(base)
        return t.expand(*shape), np.broadcast_to(vals, shape)
    raise ValueError(layout)


def wrap_to(expected: np.ndarray, dtype) -> np.ndarray:
    """The int64/float64 reference of an int8/uint8/int16 result, wrapped to that width as torch's integer
    arithmetic wraps (e.g. int8 100 + 100 == -56); other dtypes unchanged."""
    if dtype not in SMALL_INTS or expected.dtype.kind not in "iuf" or not np.all(np.isfinite(expected)):
        return expected
    return expected.astype(np.int64).astype(NUMPY_DTYPE[dtype])


def check_op(shapes, reference, ours, atol=None, rtol=None, *, dtype=bm.float32, device="cpu", layout="contiguous",
             seed=0, domain="any", out_dtype=None):
    """Run `ours` on bessemer inputs and `reference` on the same values in numpy, and compare.

    shapes: one shape per input. reference gets numpy arrays (float64 for floats); ours gets
    bessemer tensors. Returns (actual, expected) for further checks.
    """
    rng = np.random.default_rng(seed)
    doms = domain if isinstance(domain, (list, tuple)) else [domain] * len(shapes)
    pairs = [make_input(s, dtype, device, layout, rng, d) for s, d in zip(shapes, doms)]
    actual = ours(*[p[0] for p in pairs])
    with np.errstate(all="ignore"):
        expected = np.asarray(reference(*[p[1] for p in pairs]))
    if out_dtype is not None:
        assert actual.dtype == out_dtype, f"dtype {actual.dtype}, expected {out_dtype}"
    assert str(actual.device) == device, f"result on {actual.device}, expected {device}"
    expected = wrap_to(expected, actual.dtype)
    r, a = TOL[actual.dtype]
    assert_close(actual, expected, rtol if rtol is not None else r, atol if atol is not None else a,
                 check_dtype=False)
    return actual, expected
