"""Fits the log polynomial of shaders/bm_log_trig_f32.h (bm_log_f32) and reports its float32 error.

    python tools/fit_log.py        # prints the coefficients (highest degree first) and max errors

log(x) = e ln2 + log(1 + f), 1 + f = m = x / 2^e in [sqrt(1/2), sqrt(2)), and
log(1 + f) = f + f^2 Q(f), Q of degree 8 (9 coefficients; degree 7 measures 1.2 ulp). Q is fitted on
Chebyshev nodes by Lawson's iteratively reweighted least squares (as tools/fit_erf.py), against
mpmath at 40 digits, to minimise the maximum error of the result relative to log(1 + f):
f^2 (Q_fit - Q) / log(1 + f), not Q's own relative error. The float32 check runs the shader's
evaluation order (Horner with fma) in numpy on every float32 x in [sqrt(1/2)/2, 2 sqrt(2)) (e = -1,
0, 1: where the rounding errors weigh most; larger |e| only dilute them) against float64 log.
Products of two float32 values are exact in float64, so float64 fma followed by one rounding
matches fma (up to rare double roundings). tools/check_log.cpp checks every float32 in C++.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np

mp.mp.dps = 40
f32 = np.float32

DEG = 8
LO, HI = math.sqrt(0.5) - 1, math.sqrt(2) - 1
LN2_HI, LN2_LO = f32(0.693359375), f32(-2.12194440e-4)  # LN2_HI * e is exact for |e| < 2^15


def fit(deg, npts=3000, iters=40):
    k = np.arange(npts)
    f = (LO + HI) / 2 + (HI - LO) / 2 * np.cos(np.pi * (k + 0.5) / npts)
    f = f[np.abs(f) > 1e-6]  # Q(0) = -1/2; the error's weight f^2 / log(1 + f) vanishes there
    log1p = [mp.log1p(mp.mpf(float(v))) for v in f]
    q = np.array([float((lg - mp.mpf(float(v))) / mp.mpf(float(v)) ** 2) for lg, v in zip(log1p, f)])
    wt = f * f / np.abs(np.array([float(lg) for lg in log1p]))
    a = np.vander(f, deg + 1, increasing=True)
    w = np.ones(len(f))
    for _ in range(iters):
        sw = np.sqrt(w) * wt
        c, *_ = np.linalg.lstsq(a * sw[:, None], q * sw, rcond=None)
        err = (a @ c - q) * wt
        w = w * np.abs(err)
        w /= w.sum()
    return [f32(x) for x in c], float(np.max(np.abs(err)))


def fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def log32(x, cs):
    """bm_log_f32 for positive normal float32 x (numpy arrays), operation by operation."""
    b = x.view(np.uint32).astype(np.int64) - 0x3F3504F3
    ef = (b >> 23).astype(np.float32)
    f = ((b & 0x007FFFFF) + 0x3F3504F3).astype(np.uint32).view(np.float32) - f32(1)
    q = np.full_like(f, cs[-1])
    for c in cs[-2::-1]:
        q = fma(q, f, np.full_like(f, c))
    t = fma(f * f, q, ef * LN2_LO)
    return fma(ef, np.full_like(f, LN2_HI), f + t)


def ulp_error(got, want64):
    spacing = np.spacing(np.abs(want64.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - want64) / spacing


def main():
    cs, err = fit(DEG)
    print(f"Q of degree {DEG} on [sqrt(1/2) - 1, sqrt(2) - 1]: fit error {err:.2e} (2^{math.log2(err):.1f})")
    print("  " + ", ".join(f"{float(c):.9g}f" for c in cs[::-1]))
    lo, hi = np.array([math.sqrt(0.5) / 2, 2 * math.sqrt(2)], dtype=np.float32).view(np.uint32)
    worst, at = 0.0, 0.0
    for start in range(int(lo), int(hi), 1 << 22):
        x = np.arange(start, min(start + (1 << 22), int(hi)), dtype=np.uint32).view(np.float32)
        e = ulp_error(log32(x, cs), np.log(x.astype(np.float64)))
        i = int(np.argmax(e))
        if e[i] > worst:
            worst, at = float(e[i]), float(x[i])
    print(f"float32 max error on [sqrt(1/2)/2, 2 sqrt(2)): {worst:.4f} ulp at x = {at:.9g}")


if __name__ == "__main__":
    main()
