"""bessemer.optim.lr_scheduler against torch.optim.lr_scheduler: the same learning rates at every
step (get_last_lr() and the param groups' lr), resuming from state_dict / last_epoch, the closed
forms of step(epoch), and the same warnings and errors."""

import math
import warnings

import pytest
import torch

import bessemer as bm
from bessemer.optim import lr_scheduler as bsched

STEPS = 30


class Scale:
    """A callable object: LambdaLR saves its __dict__ in state_dict (functions are not saved)."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base**epoch


SCHEDULES = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=1e-4),  # past T_max: restarts
    "CosineAnnealingLR_no_min": lambda m, o: m.CosineAnnealingLR(o, T_max=10),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=12),
    "LinearLR_default": lambda m, o: m.LinearLR(o),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lr_lambda=lambda e: 1.0 / (1 + e)),
    "LambdaLR_per_group": lambda m, o: m.LambdaLR(o, lr_lambda=[lambda e: 0.9**e, Scale(0.8)]),
}


def optimizers(cls="SGD"):
    p = bm.nn.Parameter(bm.ones(2))
    q = bm.nn.Parameter(bm.ones(3))
    tp = torch.nn.Parameter(torch.ones(2))
    tq = torch.nn.Parameter(torch.ones(3))
    kw = dict(lr=0.1)
    ours = getattr(bm.optim, cls)([{"params": [p]}, {"params": [q], "lr": 0.03}], **kw)
    theirs = getattr(torch.optim, cls)([{"params": [tp]}, {"params": [tq], "lr": 0.03}], **kw)
    return ours, theirs


def lrs(opt):
    return [g["lr"] for g in opt.param_groups]


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == pytest.approx(y, rel=1e-15, abs=1e-18)


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_matches_torch(name):
    opt, topt = optimizers()
    s, ts = SCHEDULES[name](bsched, opt), SCHEDULES[name](torch.optim.lr_scheduler, topt)
    assert_same(lrs(opt), lrs(topt))
    assert_same(s.get_last_lr(), ts.get_last_lr())
    for _ in range(STEPS):
        opt.step()
        topt.step()
        s.step()
        ts.step()
        assert_same(lrs(opt), lrs(topt))
        assert_same(s.get_last_lr(), ts.get_last_lr())
    assert s.last_epoch == ts.last_epoch == STEPS


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_state_dict_resume_matches_torch(name):
    """Save after 10 steps; a new optimizer + scheduler loads both states and continues as torch's does."""
    opt, topt = optimizers("Adam")
    s, ts = SCHEDULES[name](bsched, opt), SCHEDULES[name](torch.optim.lr_scheduler, topt)
    for _ in range(10):
        opt.step()
        topt.step()
        s.step()
        ts.step()
    sd, opt_sd = s.state_dict(), opt.state_dict()
    assert set(sd) == set(ts.state_dict())
    assert "optimizer" not in sd
    opt2, topt2 = optimizers("Adam")
    s2, ts2 = SCHEDULES[name](bsched, opt2), SCHEDULES[name](torch.optim.lr_scheduler, topt2)
    opt2.load_state_dict(opt_sd)
    topt2.load_state_dict(topt.state_dict())
    s2.load_state_dict(sd)
    ts2.load_state_dict(ts.state_dict())
    for _ in range(STEPS - 10):
        opt2.step()
        topt2.step()
        s2.step()
        ts2.step()
        assert_same(lrs(opt2), lrs(topt2))
        assert_same(s2.get_last_lr(), ts2.get_last_lr())


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "CosineAnnealingLR", "LinearLR"])
def test_last_epoch_resume_matches_torch(name):
    """A scheduler built with last_epoch=k (initial_lr in the groups) continues as torch's."""
    opt, topt = optimizers()
    for o in (opt, topt):
        for g in o.param_groups:
            g["initial_lr"] = g["lr"]
    s = getattr(bsched, name)(opt, **_kwargs(name), last_epoch=5)
    ts = getattr(torch.optim.lr_scheduler, name)(topt, **_kwargs(name), last_epoch=5)
    assert_same(lrs(opt), lrs(topt))
    for _ in range(10):
        opt.step()
        topt.step()
        s.step()
        ts.step()
        assert_same(lrs(opt), lrs(topt))
        assert_same(s.get_last_lr(), ts.get_last_lr())


def _kwargs(name):
    return {"StepLR": dict(step_size=4, gamma=0.5), "MultiStepLR": dict(milestones=[3, 7, 7, 20], gamma=0.3),
            "CosineAnnealingLR": dict(T_max=7, eta_min=1e-4),
            "LinearLR": dict(start_factor=0.25, end_factor=0.9, total_iters=12)}[name]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "CosineAnnealingLR", "LinearLR"])
def test_step_with_epoch_uses_the_closed_form(name):
    opt, topt = optimizers()
    s, ts = SCHEDULES[name](bsched, opt), SCHEDULES[name](torch.optim.lr_scheduler, topt)
    for epoch in (3, 8, 15, 2):
        opt.step()
        topt.step()
        with pytest.warns(UserWarning, match="The epoch parameter"):
            s.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts.step(epoch)
        assert_same(lrs(opt), lrs(topt))


def test_warnings_and_errors_match_torch():
    opt, _ = optimizers()
    s = bsched.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        bsched.StepLR([], step_size=2)
    opt, _ = optimizers()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        bsched.StepLR(opt, step_size=2, last_epoch=3)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        bsched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor expected to be between 0 and 1"):
        bsched.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        bsched.LambdaLR(opt, lr_lambda=[lambda e: 1.0])
    # no warning in the right order
    opt, _ = optimizers()
    s = bsched.CosineAnnealingLR(opt, T_max=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        s.step()


def test_lambda_state_dict_saves_callable_objects_only():
    opt, topt = optimizers()
    s = bsched.LambdaLR(opt, lr_lambda=[lambda e: 0.9**e, Scale(0.8)])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [None, {"base": 0.8}]
    s2 = bsched.LambdaLR(opt, lr_lambda=[lambda e: 0.9**e, Scale(0.5)])
    s2.load_state_dict(sd)
    assert s2.lr_lambdas[1].base == 0.8
    assert math.isclose(s2.get_last_lr()[0], s.get_last_lr()[0])
