"""Neural-network ops and layers: bessemer CPU vs torch CPU.

main() runs every module-level function named bench_* in name order, so a new benchmark is just a
new function here.
"""

import numpy as np

from common import bm, compare, header, torch


def bench_norms():
    """batch_norm in eval (ResNet-18's shape after the stem) and layer_norm over the last dim of a
    transformer-sized activation; plus the activations. GB/s counts bytes read and written."""
    import torch.nn.functional as TF

    from bessemer.nn import functional as F

    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
    c = a.shape[1]
    mean, var = rng.standard_normal(c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    x, t = bm.from_numpy(a), torch.from_numpy(a)
    bms = [bm.from_numpy(v) for v in (mean, var, w, b)]
    ts = [torch.from_numpy(v) for v in (mean, var, w, b)]
    compare("batch_norm eval (8, 64, 56, 56) f32",
            {"bessemer": lambda: F.batch_norm(x, *bms[:2], *bms[2:], training=False),
             "torch": lambda: TF.batch_norm(t, *ts[:2], *ts[2:], training=False)},
            work=2 * a.nbytes, unit="GB/s", goal=("torch", 1.0))

    a = rng.standard_normal((64, 128, 768)).astype(np.float32)
    w, b = rng.standard_normal(768).astype(np.float32), rng.standard_normal(768).astype(np.float32)
    x, t = bm.from_numpy(a), torch.from_numpy(a)
    bw, bb, tw, tb = bm.from_numpy(w), bm.from_numpy(b), torch.from_numpy(w), torch.from_numpy(b)
    compare("layer_norm last dim (64, 128, 768) f32",
            {"bessemer": lambda: F.layer_norm(x, 768, bw, bb), "torch": lambda: TF.layer_norm(t, (768,), tw, tb)},
            work=2 * a.nbytes, unit="GB/s", goal=("torch", 1.0))
    xt, tt = x.transpose(0, 1), t.transpose(0, 1)  # rows still dense, rows' order strided
    compare("layer_norm last dim, transposed view",
            {"bessemer": lambda: F.layer_norm(xt, 768, bw, bb), "torch": lambda: TF.layer_norm(tt, (768,), tw, tb)},
            work=2 * a.nbytes, unit="GB/s")

    a = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
    x, t = bm.from_numpy(a), torch.from_numpy(a)
    compare("gelu (8, 64, 56, 56) f32", {"bessemer": lambda: F.gelu(x), "torch": lambda: TF.gelu(t)},
            work=2 * a.nbytes, unit="GB/s")
    compare("silu (8, 64, 56, 56) f32", {"bessemer": lambda: F.silu(x), "torch": lambda: TF.silu(t)},
            work=2 * a.nbytes, unit="GB/s")


def bench_max_pool() -> None:
    """ResNet-18's pooling: the stem's max_pool2d and the head's global average, float32."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 64, 112, 112), dtype=np.float32)
    bx, tx = bm.from_numpy(a), torch.from_numpy(a)
    compare("max_pool2d 3x3 s2 p1 (8, 64, 112, 112) float32", {
        "bessemer": lambda: bm.nn.functional.max_pool2d(bx, 3, 2, 1),
        "torch": lambda: torch.nn.functional.max_pool2d(tx, 3, 2, 1),
    }, work=a.nbytes, unit="GB/s")
    h = rng.standard_normal((8, 512, 7, 7), dtype=np.float32)
    bh, th = bm.from_numpy(h), torch.from_numpy(h)
    compare("adaptive_avg_pool2d 1x1 (8, 512, 7, 7) float32", {
        "bessemer": lambda: bm.nn.functional.adaptive_avg_pool2d(bh, 1),
        "torch": lambda: torch.nn.functional.adaptive_avg_pool2d(th, 1),
    }, work=h.nbytes, unit="GB/s")


def bench_conv2d_3x3() -> None:
    """A ResNet-18 layer1 convolution: 8x64x56x56, 64 3x3 filters, padding 1, float32."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    bx, bw = bm.from_numpy(x), bm.from_numpy(w)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9
    compare("conv2d 8x64x56x56, 64x3x3, pad 1 float32", {
        "bessemer": lambda: bm.nn.functional.conv2d(bx, bw, padding=1),
        "torch": lambda: torch.nn.functional.conv2d(tx, tw, padding=1),
    }, work=flops, goal=("torch", 0.5))


def bench_resnet18() -> None:
    """ResNet-18 inference (eval mode, 224x224) at batch 1 and 8: bessemer CPU vs torch CPU in NCHW
    and in channels_last (the faster of the two is the bar), same weights (torch's, copied through
    the state_dict). Both run as inference (torch.no_grad, bm.no_grad): with autograd recording, every
    activation stays alive until the output is dropped, and each layer writes to memory that is not
    in cache. The logits' largest difference relative to torch's largest logit is printed."""
    import copy
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
    from torch_resnet import TorchResNet18

    torch.manual_seed(0)
    tmodel = TorchResNet18().eval()
    tmodel_cl = copy.deepcopy(tmodel).to(memory_format=torch.channels_last)
    model = bm.models.resnet18().eval()
    model.load_state_dict({k: bm.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    for batch in (1, 8):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224), dtype=np.float32)
        bx, tx = bm.from_numpy(x), torch.from_numpy(x)
        tx_cl = tx.contiguous(memory_format=torch.channels_last)

        def run_torch(m=tmodel, t=tx):
            with torch.no_grad():
                return m(t)

        def run_ours(t=bx):
            with bm.no_grad():
                return model(t).numpy()

        compare(f"resnet18 inference batch {batch} 224x224 f32", {
            "bessemer": run_ours,
            "torch": run_torch,
            "torch_cl": lambda tx_cl=tx_cl: run_torch(tmodel_cl, tx_cl),
        }, work=batch, unit="images/s", goal=(("torch", "torch_cl"), 1.2), scale=1.0)
        want = run_torch().numpy()
        rel = np.abs(run_ours() - want).max() / np.abs(want).max()
        print(f"{'':42}   logits: max |bessemer - torch| / max |torch| = {rel:.2e} (budget 1e-4)", flush=True)


def main():
    header("nn")
    for name, fn in sorted(globals().items()):
        if name.startswith("bench_") and callable(fn):
            fn()


if __name__ == "__main__":
    main()
