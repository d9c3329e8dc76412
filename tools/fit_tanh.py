"""Fits the expm1 polynomial of bm_tanh (shaders/activation.h) and reports tanh's float32 error.

    python tools/fit_tanh.py      # prints P's coefficients (highest degree first) and the errors

bm_tanh computes tanh(|x|) = e / (e + 2) with e = expm1(2|x|) = 2^k (expm1(r) + 1) - 1, |r| <= ln2/2,
and expm1(r) = r + r^2 (1/2 + r P(r)). P is fitted here to minimise the maximum relative error of
expm1(r) on Chebyshev nodes (Lawson's iteratively reweighted least squares against mpmath at 40
digits). The float32 check runs the shader's operations in numpy (float64 products of float32
values are exact, so a float64 fma rounded once to float32 is the float32 fma) over a grid of x;
the exhaustive check over every float32 was done in C++ with the header itself (max 2.42 ulp, at
x = 0.00777).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

mp.mp.dps = 40
f32 = np.float32
HALF_LN2 = float(mp.log(2) / 2) * 1.0005  # a little beyond ln2 / 2: k's rounding may leave r there


def fit(deg: int, npts: int = 2000, iters: int = 40):
    r = HALF_LN2 * np.cos(np.pi * (np.arange(npts) + 0.5) / npts)
    rm = [mp.mpf(float(v)) for v in r]
    em1 = np.array([float(mp.expm1(v)) for v in rm])
    y = np.array([float((mp.expm1(v) - v - v * v / 2) / v**3) for v in rm])
    a = np.vander(r, deg + 1, increasing=True)
    scale = np.abs(r**3 / em1)  # an error in P is an error of r^3 P relative to expm1(r)
    w = np.ones(npts)
    for _ in range(iters):
        sw = np.sqrt(w) * scale
        c, *_ = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)
        err = np.abs(a @ c - y) * scale
        w = w * err
        w /= w.sum()
    return [f32(v) for v in c], float(err.max())


def fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c).astype(np.float32)


def tanh32(x: np.ndarray, p) -> np.ndarray:
    """bm_tanh's operations on float32 arrays (x >= 0 up to the clamp)."""
    y = f32(2) * np.minimum(x, f32(9.02))
    magic = f32(12582912.0)
    v = fma(y, np.full_like(y, f32(1.44269504088896341)), np.full_like(y, magic))
    kf = v - magic
    k = kf.astype(np.int32)
    r = fma(kf, np.full_like(y, f32(2.12194440e-4)), fma(kf, np.full_like(y, f32(-0.693359375)), y))
    q = np.full_like(y, p[-1])
    for c in list(p[-2::-1]) + [f32(0.5)]:
        q = fma(q, r, np.full_like(y, c))
    em1 = fma(r * r, q, r)
    s = np.ldexp(np.ones_like(y), k).astype(np.float32)
    e = fma(s, em1, s - f32(1))
    return e / (e + f32(2))


def main():
    p, err = fit(4)
    print(f"P (degree 4): expm1 fit error {err:.2e} ({err / 2**-24:.4f} ulp)\n  "
          + ", ".join(f"{float(c)!r}f" for c in p[::-1]))
    x = np.concatenate([np.linspace(0, 10, 2_000_001), np.geomspace(1e-8, 1, 200_001)]).astype(np.float32)
    want = np.tanh(x.astype(np.float64))
    ulp = np.abs(tanh32(x, p) - want) / np.spacing(want.astype(np.float32)).astype(np.float64)
    print(f"tanh in float32 on {x.size} points of [0, 10]: max {ulp.max():.2f} ulp at x = {x[ulp.argmax()]!r}")


if __name__ == "__main__":
    main()
