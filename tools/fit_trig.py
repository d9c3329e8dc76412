"""Fits the sin and cos polynomials of bm_sincos_reduced_f32 (shaders/bm_log_trig_f32.h); reports their float32 error.

    python tools/fit_trig.py        # prints the coefficients (lowest degree first) and max errors

On |r| <= HI (pi/4 plus a margin: the quotient j = round(x * 2/pi) comes from a rounded product, so
r = x - j pi/2 can pass pi/4 by ~1e-4), with z = r^2:
    sin(r) = r + (r z) S(z),   cos(r) = 1 + z C(z),   S of degree 2, C of degree 3 (in z).
Each is fitted to minimise the maximum *relative* error of sin / cos (not of S / C) on Chebyshev
nodes by Lawson's iteratively reweighted least squares, as tools/fit_erf.py, against mpmath at 40
digits. The coefficients are rounded to float32 one at a time from the lowest degree up, the rest
refitted after each, so the later ones absorb the earlier ones' rounding. The float32 check runs the
header's evaluation order (Horner with fma, then one fma) in numpy over every float32 r in
[2^-12, HI]: products of two float32 values are exact in float64, so float64 fma followed by one
rounding matches fma. (Below 2^-12 sin's r z S(z) is under 2^-25 r and cos's z C(z) under 2^-25.)
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

mp.mp.dps = 40
f32 = np.float32

HI = 0.7856  # pi/4 = 0.785398...; the largest |r| over every float32 |x| <= 4096 is 0.78556


def sin_target(r):
    """S's target (sin(r) - r) / r^3, and the factor r^3 / sin(r) turning S's error into sin's relative error."""
    rm = mp.mpf(float(r))
    s = mp.sin(rm)
    return float((s - rm) / rm**3), float(rm**3 / s)


def cos_target(r):
    rm = mp.mpf(float(r))
    c = mp.cos(rm)
    return float((c - 1) / rm**2), float(rm**2 / c)


def fit(target, deg, fixed=(), npts=3000, iters=40):
    k = np.arange(npts)
    r = HI / 2 + HI / 2 * np.cos(np.pi * (k + 0.5) / npts)  # Chebyshev nodes on (0, HI)
    g, wt = map(np.array, zip(*(target(v) for v in r)))
    a = np.vander(r * r, deg, increasing=True)
    nf = len(fixed)
    y = g - a[:, :nf] @ np.array(fixed, dtype=np.float64) if nf else g
    a = a[:, nf:]
    w = np.ones(npts)
    for _ in range(iters):
        sw = np.sqrt(w) * wt
        c, *_ = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)
        err = (a @ c - y) * wt
        w = w * np.abs(err)
        w /= w.sum()
    return list(c), float(np.max(np.abs(err)))


def fit_f32(target, deg):
    """deg float32 coefficients, lowest degree first, and the relative error of the unrounded fit."""
    fixed, err = [], None
    for i in range(deg):
        c, e = fit(target, deg, fixed)
        err = e if i == 0 else err
        fixed.append(f32(c[0]))
    return fixed, err


def fma(a, b, c):
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(np.float32)


def horner(cs, z):
    p = np.full_like(z, cs[-1])
    for c in cs[-2::-1]:
        p = fma(p, z, f32(c))
    return p


def sin32(cs, r):
    z = r * r
    return fma(r * z, horner(cs, z), r)


def cos32(cs, r):
    z = r * r
    return fma(z, horner(cs, z), f32(1))


def max_ulp(f32_fn, ref, cs):
    """Largest error in ulps of the float32 rounding of the float64 reference (as tests/harness.py)."""
    lo, hi = f32(2.0**-12).view(np.int32), f32(HI).view(np.int32)
    worst = (0.0, None)
    for b in range(lo, hi + 1, 1 << 22):
        r = np.arange(b, min(b + (1 << 22), hi + 1), dtype=np.int32).view(np.float32)
        want = ref(r.astype(np.float64))  # float64: its error is far below a float32 ulp
        e = np.abs(f32_fn(cs, r).astype(np.float64) - want) / np.spacing(np.abs(want.astype(f32))).astype(np.float64)
        i = int(np.argmax(e))
        worst = max(worst, (float(e[i]), float(r[i])))
    return worst


def main():
    # S with 3 coefficients fits to 3.8e-9 (0.06 ulp); C needs 4 (3 give 3.8e-8: 1.33 ulp in float32)
    for name, target, deg, fn, ref, form in [
        ("S", sin_target, 3, sin32, np.sin, "sin(r) = r + (r z) S(z)"),
        ("C", cos_target, 4, cos32, np.cos, "cos(r) = 1 + z C(z)"),
    ]:
        cs, err = fit_f32(target, deg)
        print(f"{name} ({form}, |r| <= {HI}): relative fit error {err:.2e} (before rounding to float32)")
        print("  " + ", ".join(f"{float(x):.8e}f" for x in cs))
        e, at = max_ulp(fn, ref, cs)
        print(f"  float32 on every r in [2^-12, {HI}]: max {e:.3f} ulp at r = {at!r}")


if __name__ == "__main__":
    main()
