"""The CPU convolution kernels' instruction-set copies (csrc/cpu/conv_winograd_kernels.h): every
copy this CPU runs (BESSEMER_CPU_ISA=base, avx2, avx512) matches torch in float64 on the shapes that
take each path (Winograd, the panel kernel with an odd and an even number of column panels, row
padding, bias, a 7x7 stem, 1x1, the direct kernel's blocks), and the AVX2 and AVX-512 copies, which add each element's
products in the same order with one FMA each, give the same bits. The same for the weight gradient,
whose panel and direct paths sum the same pixel blocks in the same order: with 13 output
channels AVX2 takes the direct kernel (16-channel blocks) and AVX-512 the panel kernel, and the bits
still agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import torch

import bessemer as bm

# (input shape, weight shape, stride, padding): Winograd (3x3, stride 1, >= 16 channels) with 6,
# 2, 11 and 1 column panels (a lone panel runs two row panels at a time, 5 row panels leave one);
# the panel kernel (stride 2, a 7x7 stem) with few output channels; 1x1 (the direct kernel on
# AVX-512, read in place, and the panel kernel on AVX2: the same bits); the direct kernel (24+ output
# channels: a 7x7 stride-2 stem, 5x5 stride 1 and 3x3 stride 2 with a partial
# last block of channels, pixel blocks of unequal sizes, output rows two at a time, blocks wrapping
# into the next row, rows stacked across 3 images); the Winograd
# weight gradient (32+ channels each way) with padded input channels and a partial channel block;
# Winograd at stride 2 (64+ channels, 128+ tiles) with odd sizes, and without padding (on Zen 3 /
# Zen 4; the 58-wide one on every machine).
SHAPES = [((2, 32, 13, 11), (20, 32, 3, 3), 1, 1), ((1, 16, 9, 9), (16, 16, 3, 3), 1, 1),
          ((3, 17, 10, 21), (19, 17, 3, 3), 1, 1), ((1, 16, 7, 7), (26, 16, 3, 3), 1, 1),
          ((2, 8, 15, 15), (7, 8, 3, 3), 2, 1),
          ((1, 3, 40, 40), (10, 3, 7, 7), 2, 3), ((2, 24, 9, 9), (30, 24, 1, 1), 1, 0),
          ((2, 3, 41, 39), (32, 3, 7, 7), 2, 3), ((1, 6, 7, 23), (48, 6, 5, 5), 1, 2),
          ((2, 20, 11, 13), (50, 20, 3, 3), 2, 1), ((1, 5, 17, 15), (13, 5, 3, 3), 2, 1),
          ((2, 20, 13, 13), (40, 20, 3, 3), 2, 1), ((1, 16, 9, 6), (24, 16, 3, 3), 2, 0),
          ((2, 35, 9, 11), (50, 35, 3, 3), 1, 1), ((2, 12, 21, 30), (24, 12, 3, 3), 2, 1),
          ((3, 16, 13, 13), (32, 16, 3, 3), 2, 1), ((16, 8, 2, 30), (32, 8, 3, 3), 2, 1),
          ((2, 65, 33, 35), (67, 65, 3, 3), 2, 1), ((1, 64, 60, 62), (64, 64, 3, 3), 2, 0),
          ((2, 64, 11, 115), (64, 64, 3, 3), 2, 1)]

_CHILD = r"""
import json, sys
import numpy as np
import bessemer as bm
shapes = json.loads(sys.argv[1])
rng = np.random.default_rng(5)
out = {"isa": bm._core.build_info()["cpu_isa"], "y": [], "gw": []}
for xs, ws, s, p in shapes:
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    y = bm.nn.functional.conv2d(bm.tensor(x), bm.tensor(w), bm.tensor(b), stride=s, padding=p)
    gw = bm._core._conv2d_backward_weight(y, bm.tensor(x), ws, s, p)
    out["y"].append(y.numpy().view(np.int32).ravel().tolist())
    out["gw"].append(gw.numpy().view(np.int32).ravel().tolist())
json.dump(out, sys.stdout)
"""


def _run(isa: str) -> dict:
    env = dict(os.environ, BESSEMER_CPU_ISA=isa, BESSEMER_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(SHAPES)], env=env, capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def _reference() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    refs = []
    for xs, ws, s, p in SHAPES:
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
        b = rng.standard_normal(ws[0]).astype(np.float32)
        xd, wd, bd = (torch.from_numpy(a).double() for a in (x, w, b))
        wd.requires_grad_(True)
        t = torch.nn.functional.conv2d(xd, wd, bd, stride=s, padding=p)
        # the weight gradient for grad_output = our float32 output (the child's), rounded alike
        (gw,) = torch.autograd.grad(t, wd, t.detach().float().double())
        refs.append((t.detach().numpy(), gw.numpy()))
    return refs


def test_every_conv_kernel_copy_matches_torch_and_the_fma_copies_agree_bit_for_bit():
    best = bm._core.build_info()["cpu_isa"]
    isas = ["base", "avx2", "avx512"][: ["base", "avx2", "avx512"].index(best) + 1]
    refs = _reference()
    got = {}
    for isa in isas:
        r = _run(isa)
        assert r["isa"] == isa
        got[isa] = r
        for (xs, ws, s, p), (ref, ref_gw), y, gw in zip(SHAPES, refs, r["y"], r["gw"], strict=True):
            y = np.array(y, dtype=np.int32).view(np.float32).reshape(ref.shape)
            np.testing.assert_allclose(y, ref, rtol=2e-5, atol=5e-5,
                                       err_msg=f"{isa} copy, x {xs} w {ws} stride {s} padding {p}")
            gw = np.array(gw, dtype=np.int32).view(np.float32).reshape(ref_gw.shape)
            np.testing.assert_allclose(gw, ref_gw, rtol=1e-4, atol=1e-3 * np.abs(ref_gw).max(),
                                       err_msg=f"{isa} weight gradient, x {xs} w {ws} stride {s} padding {p}")
    if "avx512" in got:
        for shape, a, b, ga, gb in zip(SHAPES, got["avx2"]["y"], got["avx512"]["y"], got["avx2"]["gw"],
                                       got["avx512"]["gw"], strict=True):
            assert a == b, f"x {shape[0]} w {shape[1]}: the AVX-512 kernel's bits differ from the AVX2 kernel's"
            assert ga == gb, f"x {shape[0]} w {shape[1]}: the AVX-512 weight gradient's bits differ from AVX2's"
