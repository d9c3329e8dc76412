"""Fits the erf/erfc polynomials of shaders/erf.h and reports their float32 error.

    python tools/fit_erf.py        # prints the coefficients (highest degree first) and max errors

Each piece is a polynomial in a variable v(z), fitted to minimise the maximum *relative* error on
Chebyshev nodes by Lawson's iteratively reweighted least squares, against mpmath at 40 digits.
The float32 check runs the shader's evaluation order (Horner with fma) in numpy: products of two
float32 values are exact in float64, so float64 fma followed by one rounding matches fma.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np

mp.mp.dps = 40
f32 = np.float32


def fit(f, var, lo, hi, deg, npts=2000, iters=30):
    k = np.arange(npts)
    z = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / npts)
    y = np.array([float(f(mp.mpf(float(v)))) for v in z])
    a = np.vander(var(z), deg + 1, increasing=True)
    w = np.ones(npts)
    for _ in range(iters):
        sw = np.sqrt(w) / np.abs(y)
        c, *_ = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)
        err = (a @ c - y) / y
        w = w * np.abs(err)
        w /= w.sum()
    return [f32(x) for x in c], float(np.max(np.abs(err)))


def erfcx(z):
    return mp.erfc(z) * mp.exp(z * z)


PIECES = {
    # name: (function, variable, interval, degree)
    "Q (erf small: erf(x) = x + x Q(x^2))": (
        lambda u: (mp.erf(mp.sqrt(u)) / mp.sqrt(u) if u > 0 else 2 / mp.sqrt(mp.pi)) - 1, lambda u: u, (0, 0.25), 5),
    "R on [0.5, 1.5) in z - 1": (erfcx, lambda z: z - 1.0, (0.5, 1.5), 9),
    "R on [1.5, 3) in z - 2.25": (erfcx, lambda z: z - 2.25, (1.5, 3.0), 9),
    "P on [3, inf): R = P(1/z^2) / z": (lambda z: erfcx(z) * z, lambda z: 1 / (z * z), (3.0, 10.1), 6),
    # gelu's one fit below 3 (bm_erfcx_gelu_low): one polynomial where erf uses Q, R1 and R2, fewer
    # operations per element in a vector loop that evaluates every piece
    "G on [0, 3) in z - 1.5 (gelu)": (erfcx, lambda z: z - 1.5, (0.0, 3.0), 15),
}


def fma(a, b, c):
    return f32(np.float64(a) * np.float64(b) + np.float64(c))


def horner(cs, t):
    r = cs[-1]
    for c in cs[-2::-1]:
        r = fma(r, t, c)
    return r


def main():
    cs = {}
    for name, (f, var, (lo, hi), deg) in PIECES.items():
        c, err = fit(f, var, lo, hi, deg)
        cs[name] = c
        print(f"{name}: fit error {err:.2e}\n  " + ", ".join(f"{float(x):.8e}f" for x in c[::-1]))
    q, r1, r2, p3, _ = cs.values()

    def erfcx32(z):
        if z < 1.5:
            return horner(r1, f32(z - f32(1)))
        if z < 3:
            return horner(r2, f32(z - f32(2.25)))
        return f32(horner(p3, f32(f32(1) / f32(z * z))) / z)

    def erf32(x):
        a = abs(x)
        if a < 0.5:
            return fma(x, horner(q, f32(x * x)), x)
        hi = f32(a * a)
        e = f32(math.exp(-float(hi)))
        e = fma(-e, fma(a, a, -hi), e)
        r = f32(f32(1) - f32(e * erfcx32(a)))
        return r if x > 0 else -r

    xs = np.linspace(-6, 6, 24001).astype(np.float32)
    worst = max(abs(float(erf32(x)) - float(mp.erf(float(x)))) / float(np.spacing(abs(f32(mp.erf(float(x))))))
                for x in xs if x != 0)
    print(f"erf float32 max error: {worst:.2f} ulp")


if __name__ == "__main__":
    main()
