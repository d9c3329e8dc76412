"""Every convolution shape of ResNet-18 (224x224), batch 1 and 8, float32: forward, input gradient
and weight gradient, bessemer CPU vs torch CPU. Each row prints GFLOP/s and the fraction of the
machine's float32 FMA peak (measured by the library on its thread pool: peak_gflops).

python benchmarks/bench_conv.py [fwd|bwd] [batch ...]
"""

import sys

from common import bm, compare, header, np, torch

# (name, in channels, out channels, kernel, stride, padding, input size): each distinct conv of
# torchvision's ResNet-18 (the stem, the 3x3 convs of each stage, the strided 3x3 and the 1x1
# downsample that open stages 2-4).
SHAPES = [
    ("conv1 7x7 s2", 3, 64, 7, 2, 3, 224),
    ("layer1 3x3", 64, 64, 3, 1, 1, 56),
    ("layer2.0 3x3 s2", 64, 128, 3, 2, 1, 56),
    ("layer2.0 ds 1x1 s2", 64, 128, 1, 2, 0, 56),
    ("layer2 3x3", 128, 128, 3, 1, 1, 28),
    ("layer3.0 3x3 s2", 128, 256, 3, 2, 1, 28),
    ("layer3.0 ds 1x1 s2", 128, 256, 1, 2, 0, 28),
    ("layer3 3x3", 256, 256, 3, 1, 1, 14),
    ("layer4.0 3x3 s2", 256, 512, 3, 2, 1, 14),
    ("layer4.0 ds 1x1 s2", 256, 512, 1, 2, 0, 14),
    ("layer4 3x3", 512, 512, 3, 1, 1, 7),
]


def peak_gflops() -> float:
    """float32 FMA peak of THREADS cores, measured: the library runs a register-only FMA loop on
    its pool in the instruction-set copy its kernels use (bm._core._fma_peak_gflops,
    csrc/cpu/fma_peak.cpp). Lanes x the clock /proc/cpuinfo reports was no peak: VMs report a base
    clock the cores run above (Zen 4 here: 2.6 GHz reported, 3.7 reached), which put the direct
    convolutions at 130% of it. Winograd's rows can still pass 100%: they count the
    multiplications they save."""
    return bm._core._fma_peak_gflops(0.5)


def bench_shape(name, c, o, k, s, p, size, batch, passes, peak):
    rng = np.random.default_rng(0)
    out_size = (size + 2 * p - k) // s + 1
    x = rng.standard_normal((batch, c, size, size), dtype=np.float32)
    w = rng.standard_normal((o, c, k, k), dtype=np.float32) * 0.05
    g = rng.standard_normal((batch, o, out_size, out_size), dtype=np.float32)
    # The filters as a layer holds them: storage of bessemer's own, whose writes it sees. Filters
    # shared with NumPy (bm.from_numpy) are compared byte for byte with the packed copy's source
    # on every call (csrc/cpu/conv_pack_cache.h): 3% of layer4.0's forward at batch 8 on Zen 4.
    bx, bw, bg = bm.from_numpy(x), bm.tensor(w), bm.from_numpy(g)
    tx, tw, tg = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(g)
    flops = 2.0 * batch * o * out_size * out_size * c * k * k
    conv_bwd = torch.ops.aten.convolution_backward
    args = ([s, s], [p, p], [1, 1], False, [0, 0], 1)
    rows = {
        "fwd": {"bessemer": lambda: bm.nn.functional.conv2d(bx, bw, stride=s, padding=p),
                "torch": lambda: torch.nn.functional.conv2d(tx, tw, stride=s, padding=p)},
        "bwd input": {"bessemer": lambda: bm._core._conv2d_backward_input(bg, bw, list(x.shape), s, p),
                      "torch": lambda: conv_bwd(tg, tx, tw, None, *args, [True, False, False])},
        "bwd weight": {"bessemer": lambda: bm._core._conv2d_backward_weight(bg, bx, list(w.shape), s, p),
                       "torch": lambda: conv_bwd(tg, tx, tw, None, *args, [False, True, False])},
    }
    for what in passes:
        with torch.no_grad():
            times = compare(f"b{batch} {name} {c}->{o} @{size} {what}", rows[what], work=flops, goal=("torch", 1.0))
        print(f"{'':42}   bessemer {flops / times['bessemer'] / 1e9 / peak:6.1%} of peak, "
              f"torch {flops / times['torch'] / 1e9 / peak:6.1%} of peak ({peak:.0f} GFLOP/s)", flush=True)


def main() -> None:
    args = sys.argv[1:]
    passes = [a for a in args if a in ("fwd", "bwd")] or ["fwd", "bwd"]
    passes = [q for a in passes for q in (["fwd"] if a == "fwd" else ["bwd input", "bwd weight"])]
    batches = [int(a) for a in args if a.isdigit()] or [1, 8]
    peak = peak_gflops()
    header(f"conv2d, every ResNet-18 shape (float32 FMA peak {peak:.0f} GFLOP/s)")
    for batch in batches:
        for shape in SHAPES:
            bench_shape(*shape, batch, passes, peak)


if __name__ == "__main__":
    main()
