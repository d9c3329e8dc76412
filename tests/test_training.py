"""Training end to end: bessemer against torch on the same weights and batches (SGD and AdamW),
cpu against metal-sim, checkpoints that resume exactly in a new process, memory that stays flat,
and the digits example."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(8 * 2 * 2, 16), nn.GELU(), nn.Dropout(0.0), nn.Linear(16, 10),
    )


def _batches(n_steps, batch=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, batch))
            for _ in range(n_steps)]


def _torch_weights_into(model, tmodel):
    sd = {k: bm.tensor(v.detach().numpy()) for k, v in tmodel.state_dict().items()}
    model.load_state_dict(sd)


def _train(lib, model, opt, batches, device=None):
    losses = []
    for xb, yb in batches:
        x = lib.tensor(xb) if device is None else lib.tensor(xb, device=device)
        y = lib.tensor(yb) if device is None else lib.tensor(yb, device=device)
        loss = lib.nn.functional.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


OPTIMIZERS = {
    "sgd_nesterov_wd": lambda lib, p: lib.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "adamw_amsgrad": lambda lib, p: lib.optim.AdamW(p, lr=3e-3, weight_decay=0.05, amsgrad=True),
}


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_training_matches_torch_step_by_step(opt_name):
    torch.manual_seed(0)
    tmodel = _cnn(torch)
    model = _cnn(bm)
    _torch_weights_into(model, tmodel)
    batches = _batches(50)
    ours = _train(bm, model, OPTIMIZERS[opt_name](bm, model.parameters()), batches)
    ref = _train(torch, tmodel, OPTIMIZERS[opt_name](torch, tmodel.parameters()), batches)
    np.testing.assert_allclose(ours, ref, rtol=1e-4)


def test_same_training_run_on_every_device():
    batches = _batches(50, batch=8, seed=1)
    runs = {}
    for device in DEVICES:
        bm.manual_seed(3)
        model = _cnn(bm).to(device)
        # SGD: Adam divides by sqrt(v), which turns rounding noise in near-zero gradients (different
        # summation orders on each backend) into full-size steps.
        opt = bm.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        runs[device] = _train(bm, model, opt, batches, device)
    for device, losses in runs.items():
        np.testing.assert_allclose(losses, runs["cpu"], rtol=1e-5, err_msg=device)


def test_memory_stays_flat_over_1000_steps():
    bm.manual_seed(0)
    model = bm.nn.Sequential(bm.nn.Linear(8, 16), bm.nn.ReLU(), bm.nn.Linear(16, 4))
    opt = bm.optim.Adam(model.parameters(), lr=1e-3)
    x, y = bm.randn(32, 8), bm.tensor(np.arange(32) % 4)
    counts = []
    for step in range(1000):
        loss = bm.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        del loss
        if step in (10, 999):
            counts.append(bm._core._live_storages())
    assert counts[1] <= counts[0], f"live storages grew from {counts[0]} to {counts[1]}"


RESUME_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {examples!r})
    import train_digits
    args = ["--device", {device!r}, "--epochs", "3", "--max-steps", "5", "--batch-size", "32", "--quiet",
            "--no-plot", "--out", {out!r}] + sys.argv[1:]
    h = train_digits.main(args)
    print(json.dumps(h["loss"]))
""")


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_resume_in_a_new_process_reproduces_the_losses(tmp_path, device):
    def run(out, *extra):
        script = RESUME_SCRIPT.format(examples=os.path.join(ROOT, "examples"), device=device, out=str(out))
        cmd = [sys.executable, "-c", script, *extra]
        # the bessemer this process imported (an installed wheel in CI, the source tree when developing)
        here = os.path.dirname(os.path.dirname(os.path.abspath(bm.__file__)))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        return json.loads(res.stdout.strip().splitlines()[-1])

    full = run(tmp_path / "full")
    first = run(tmp_path / "split", "--stop-after", "1")
    resumed = run(tmp_path / "split", "--resume")
    assert first == full[:len(first)]
    assert resumed == full  # the history carries the first epoch's losses; the rest must be identical


@pytest.mark.parametrize("device", DEVICES)
def test_digits_example_short_run(tmp_path, device):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import train_digits
    finally:
        sys.path.pop(0)
    h = train_digits.main(["--device", device, "--epochs", "2", "--max-steps", "6", "--quiet",
                           "--out", str(tmp_path)])
    assert len(h["loss"]) == 12 and len(h["test_acc"]) == 2
    assert h["loss"][-1] < h["loss"][0]
    assert (tmp_path / "training.png").stat().st_size > 1000
    assert (tmp_path / "checkpoint.bmckpt").exists()
