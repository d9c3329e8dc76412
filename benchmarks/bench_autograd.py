"""Training: autograd overhead and training steps, bessemer CPU vs torch CPU (same process, same
thread count), printed as ratios. Goals from the training issue:
  tiny op with requires_grad, forward + backward: time <= torch's
  MLP 784-512-512-10, batch 128, forward + backward + Adam step: >= 1.0x torch
  Adam step over ResNet-18's 11.7M parameters: >= torch's foreach step
  ResNet-18 training step, batch 8, 224x224, forward + backward + SGD: >= 0.7x torch
"""

from __future__ import annotations

import numpy as np

from common import bm, compare, header, torch


def bench_tiny_op() -> None:
    """(x * y).sum() on 4 elements with requires_grad, then backward: the cost of recording and of
    running the engine, not of arithmetic."""
    a = np.arange(4, dtype=np.float32)
    bx, by = bm.tensor(a, requires_grad=True), bm.tensor(a + 1)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(a + 1)

    def ours():
        (bx * by).sum().backward()
        bx.grad = None

    def theirs():
        (tx * ty).sum().backward()
        tx.grad = None

    compare("tiny op fwd+bwd (4 elements)", {"bessemer": ours, "torch": theirs}, goal=("torch", 1.0))
    compare("tiny op fwd only, requires_grad", {"bessemer": lambda: bx * by, "torch": lambda: tx * ty},
            goal=("torch", 1.0))


def _mlp(lib, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = [(784, 512), (512, 512), (512, 10)]
    params = []
    for fan_in, fan_out in sizes:
        w = (rng.uniform(-1, 1, (fan_out, fan_in)) / np.sqrt(fan_in)).astype(np.float32)
        b = np.zeros(fan_out, np.float32)
        params += [lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)]
    return params


def bench_mlp_step() -> None:
    """MLP 784-512-512-10 on a batch of 128: forward, cross-entropy, backward, Adam step."""
    if not hasattr(bm, "optim"):
        print("mlp step: bessemer.optim missing")
        return
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((128, 784)).astype(np.float32)
    yb = rng.integers(0, 10, 128)
    engines = {}
    for name, lib, F in (("bessemer", bm, bm.nn.functional), ("torch", torch, torch.nn.functional)):
        params = _mlp(lib)
        opt = lib.optim.Adam(params, lr=1e-3)
        x, y = lib.tensor(xb), lib.tensor(yb)

        def step(params=params, opt=opt, x=x, y=y, F=F, lib=lib):
            h = F.relu(F.linear(x, params[0], params[1]))
            h = F.relu(F.linear(h, params[2], params[3]))
            loss = F.cross_entropy(F.linear(h, params[4], params[5]), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

        engines[name] = step
    flops = 6 * 128 * (784 * 512 + 512 * 512 + 512 * 10)
    compare("MLP 784-512-512-10 b128 fwd+bwd+Adam", engines, work=flops, goal=("torch", 1.0))


def bench_resnet18_train_step() -> None:
    """ResNet-18, batch 8, 224x224, train mode: forward, cross-entropy, backward, SGD (momentum)."""
    if not hasattr(bm, "optim"):
        print("resnet18 step: bessemer.optim missing")
        return
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
    from torch_resnet import TorchResNet18

    torch.manual_seed(0)
    tmodel = TorchResNet18().train()
    model = bm.models.resnet18().train()
    model.load_state_dict({k: bm.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3, 224, 224), dtype=np.float32)
    y = rng.integers(0, 1000, 8)
    engines = {}
    for name, lib, net in (("bessemer", bm, model), ("torch", torch, tmodel)):
        opt = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        xb, yb = lib.tensor(x), lib.tensor(y)

        def step(lib=lib, net=net, opt=opt, xb=xb, yb=yb):
            loss = lib.nn.functional.cross_entropy(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        engines[name] = step
    compare("resnet18 train step b8 224x224 SGD", engines, work=8, unit="images/s", goal=("torch", 0.7),
            scale=1.0)


def main() -> None:
    header("autograd and training steps")
    for name, fn in sorted(globals().items()):
        if name.startswith("bench_") and callable(fn):
            fn()


if __name__ == "__main__":
    main()
