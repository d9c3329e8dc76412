"""Train a small CNN on scikit-learn's digits (8x8 handwritten digits, shipped inside scikit-learn:
nothing is downloaded), with Adam and a cosine learning-rate schedule.

    python examples/train_digits.py                        # cpu, ~97-99% test accuracy in seconds
    python examples/train_digits.py --device metal         # Apple GPU (metal-sim: the simulator)
    python examples/train_digits.py --epochs 4 --out run/  # then: --resume to continue from run/
    python -m bessemer.distributed.run --nproc-per-node 2 examples/train_digits.py --distributed

--distributed: data-parallel over the launcher's processes (DistributedDataParallel, each rank a
DistributedSampler share of every batch of --batch-size); rank 0 prints and writes the checkpoint.

Writes to --out: checkpoint.bmckpt (model, optimizer, scheduler, data-order generator, history),
training.png (training loss and test accuracy per epoch). --resume continues from the checkpoint
and gives exactly the losses the uninterrupted run would have given.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import bessemer as bm
from bessemer import nn

CHECKPOINT = "checkpoint.bmckpt"


def load_digits(seed: int = 0):
    """(x_train, y_train, x_test, y_test): images (N, 1, 8, 8) scaled to [0, 1], int64 labels;
    a fixed 80/20 split."""
    from sklearn.datasets import load_digits as sk_load

    d = sk_load()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = len(x) // 5
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 4 x 4
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),  # 64 x 2 x 2
        nn.Flatten(), nn.Linear(256, 10),
    )


def evaluate(model, x, y, batch_size: int = 512) -> float:
    model.eval()
    correct = 0
    with bm.no_grad():
        for i in range(0, len(x), batch_size):
            logits = model(x[i:i + batch_size])
            correct += int((logits.argmax(dim=1) == y[i:i + batch_size]).sum().item())
    model.train()
    return correct / len(x)


def save_plot(history: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax1 = plt.subplots(figsize=(6, 4))
    ax1.plot(np.arange(1, len(history["loss"]) + 1) / history["steps_per_epoch"], history["loss"], lw=0.8,
             color="tab:blue", label="training loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("training loss", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(np.arange(1, len(history["test_acc"]) + 1), history["test_acc"], "o-", color="tab:red",
             label="test accuracy")
    ax2.set_ylabel("test accuracy", color="tab:red")
    ax1.set_title("bessemer: small CNN on scikit-learn digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def train(args) -> dict:
    bm.manual_seed(args.seed)
    device = bm.device(args.device)
    xtr, ytr, xte, yte = load_digits(args.seed)
    x_train, y_train = bm.tensor(xtr, device=device), bm.tensor(ytr, device=device)
    x_test, y_test = bm.tensor(xte, device=device), bm.tensor(yte, device=device)

    model = make_model().to(device)
    net, rank, sampler, batch_size = model, 0, None, args.batch_size
    dataset = bm.utils.data.TensorDataset(x_train, y_train)
    if args.distributed:
        import bessemer.distributed as dist
        from bessemer.nn.parallel import DistributedDataParallel

        dist.init_process_group()
        rank, world = dist.get_rank(), dist.get_world_size()
        if args.batch_size % world:
            raise SystemExit(f"--batch-size {args.batch_size} must divide by the {world} processes")
        net = DistributedDataParallel(model)  # every rank starts from rank 0's weights
        sampler = bm.utils.data.DistributedSampler(dataset, seed=args.seed)
        batch_size = args.batch_size // world  # each rank's share of every batch
    optimizer = bm.optim.Adam(net.parameters(), lr=args.lr)
    loader_gen = bm.Generator("cpu").manual_seed(args.seed)
    loader = bm.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=sampler is None,
                                      sampler=sampler, generator=loader_gen if sampler is None else None)
    quiet = args.quiet or rank != 0
    scheduler = bm.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
    history = {"loss": [], "test_acc": [], "steps_per_epoch": len(loader)}
    start_epoch = 0
    ckpt_path = os.path.join(args.out, CHECKPOINT)
    if args.resume:
        ck = bm.load(ckpt_path, map_location=device)
        model.load_state_dict(ck["model"])
        optimizer.load_state_dict(ck["optimizer"])
        scheduler.load_state_dict(ck["scheduler"])
        loader_gen.set_state(ck["loader_generator"])
        bm.set_rng_state(ck["rng_state"])
        history, start_epoch = ck["history"], ck["epoch"]

    from tqdm import tqdm

    t0 = time.perf_counter()
    last = args.epochs if args.stop_after is None else min(args.epochs, start_epoch + args.stop_after)
    for epoch in range(start_epoch, last):
        if sampler is not None:
            sampler.set_epoch(epoch)
        bar = tqdm(loader, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False, disable=quiet or None)
        seen = correct = 0
        for step, (xb, yb) in enumerate(bar):
            if args.max_steps is not None and step >= args.max_steps:
                break
            logits = net(xb)
            loss = nn.functional.cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            history["loss"].append(loss.item())
            seen += len(yb)
            correct += int((logits.argmax(dim=1) == yb).sum().item())
            bar.set_postfix(loss=f"{history['loss'][-1]:.4f}", acc=f"{correct / seen:.3f}")
        history["test_acc"].append(evaluate(model, x_test, y_test))
        if not quiet:
            print(f"epoch {epoch + 1:3d}  loss {np.mean(history['loss'][-len(loader):]):.4f}  "
                  f"test accuracy {history['test_acc'][-1]:.4f}  ({time.perf_counter() - t0:.1f} s)")
        if rank != 0:  # checkpoints are written by rank 0 (the ranks' models are identical)
            continue
        os.makedirs(args.out, exist_ok=True)
        bm.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict(), "loader_generator": loader_gen.get_state(),
                 "rng_state": bm.get_rng_state(), "history": history, "epoch": epoch + 1}, ckpt_path)
    if args.plot and rank == 0:
        save_plot(history, os.path.join(args.out, "training.png"))
    if args.distributed:
        dist.destroy_process_group()
    return history


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu, metal, metal-sim, ... (default: cpu)")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="digits_run", help="directory for the checkpoint and the plot")
    ap.add_argument("--resume", action="store_true", help="continue from --out/checkpoint.bmckpt")
    ap.add_argument("--stop-after", type=int, default=None,
                    help="stop after this many epochs (the schedule still spans --epochs); continue with --resume")
    ap.add_argument("--max-steps", type=int, default=None, help="stop each epoch after this many steps (tests)")
    ap.add_argument("--no-plot", dest="plot", action="store_false")
    ap.add_argument("--quiet", action="store_true", help="no progress bar or per-epoch lines")
    ap.add_argument("--distributed", action="store_true",
                    help="data-parallel across the processes of `python -m bessemer.distributed.run`")
    args = ap.parse_args(argv)
    history = train(args)
    if not args.quiet and os.environ.get("RANK", "0") == "0":
        print(f"final test accuracy {history['test_acc'][-1]:.4f}")
    return history


if __name__ == "__main__":
    main(sys.argv[1:])
