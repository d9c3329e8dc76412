"""bessemer.optim against torch.optim (single-tensor, foreach=False): the same initial parameters
and the same 50 gradients (random NumPy arrays) on every device; param groups; state_dict round
trips; argument errors; one launch per parameter and no host wait on the Metal queue."""

import copy
import itertools

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import _core
from harness import DEVICES

STEPS = 50
SHAPE = (7, 5)

# float32: atol/rtol 1e-6 after 50 steps (torch's float32 sqrt on the CPU is not correctly
# rounded, ~20% of its results are 1 ulp off, so Adam drifts a little; SGD agrees to the bit).
# float64: 1e-12. The half types compute in float32 here and round once per step, torch rounds
# after every op: both drift from the exact (float64) trajectory, and ours may drift at most 1.5x
# as far as torch's own run in that dtype, plus one ulp of the largest value.
TOL = {bm.float32: (1e-6, 1e-6), bm.float64: (1e-12, 1e-12)}
HALF_EPS = {bm.float16: 2.0**-10, bm.bfloat16: 2.0**-7}
TORCH_DTYPE = {bm.float32: torch.float32, bm.float64: torch.float64, bm.float16: torch.float16,
               bm.bfloat16: torch.bfloat16}
# Whether torch's CPU kernels fuse multiply-adds as ours do (then float32 agrees to the bit, given a
# correctly rounded sqrt): true of its AVX2 / AVX-512 kernels.
TORCH_FMA = torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def dtypes_for(device):
    return [bm.float32, bm.float16, bm.bfloat16] + ([bm.float64] if device == "cpu" else [])


def data(seed=0, shape=SHAPE, steps=STEPS, n=1):
    rng = np.random.default_rng(seed)
    inits = [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]
    grads = [[rng.standard_normal(shape).astype(np.float32) for _ in range(n)] for _ in range(steps)]
    return inits, grads


def bm_tensor(a, dtype, device):
    return bm.tensor(a, device=device).to(dtype)


def torch_tensor(a, bdtype, tdtype):
    """The values bessemer sees (rounded to bdtype), in torch's tdtype."""
    return torch.tensor(a).to(TORCH_DTYPE[bdtype]).to(tdtype)


def makers(cls, **opts):
    """(bessemer optimizer factory, torch single-tensor optimizer factory) for class name `cls`."""
    return (lambda ps: getattr(bm.optim, cls)(ps, **opts),
            lambda ps: getattr(torch.optim, cls)(ps, foreach=False, **opts))


def run_pair(make_bm, make_torch, device, dtype, inits, grads, groups=None, torch_dtype=None):
    """Run both optimizers over the same gradients (torch in torch_dtype, default: the same dtype);
    returns (bessemer params, torch params) as float64 arrays, and both optimizers."""
    tdt = torch_dtype or TORCH_DTYPE[dtype]
    ps = [bm.nn.Parameter(bm_tensor(a, dtype, device)) for a in inits]
    tps = [torch.nn.Parameter(torch_tensor(a, dtype, tdt)) for a in inits]
    opt = make_bm(groups(ps) if groups else ps)
    topt = make_torch(groups(tps) if groups else tps)
    for gs in grads:
        for p, tp, g in zip(ps, tps, gs):
            p.grad = bm_tensor(g, dtype, device)
            tp.grad = torch_tensor(g, dtype, tdt)
        opt.step()
        topt.step()
    wide = (lambda p: p) if dtype == bm.float64 else (lambda p: p.to(bm.float32))
    return ([wide(p).numpy().astype(np.float64) for p in ps],
            [tp.detach().double().numpy() for tp in tps], opt, topt)


def check_matches_torch(make_bm, make_torch, device, dtype, inits, grads, groups=None):
    ours, ref, opt, topt = run_pair(make_bm, make_torch, device, dtype, inits, grads, groups)
    if dtype in TOL:
        rtol, atol = TOL[dtype]
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        return ours, ref, opt, topt
    _, exact, _, _ = run_pair(make_bm, make_torch, device, dtype, inits, grads, groups, torch_dtype=torch.float64)
    for a, b, x in zip(ours, ref, exact):
        ours_err = np.abs(a - x).max()
        torch_err = np.abs(b - x).max() if np.isfinite(b).all() else np.inf
        assert ours_err <= 1.5 * torch_err + HALF_EPS[dtype] * np.abs(x).max(), (dtype, ours_err, torch_err)
        assert ours_err <= 0.1 * np.abs(x).max(), (dtype, ours_err)  # and never far off
    return ours, ref, opt, topt


SGD_OPTIONS = [
    dict(lr=0.05),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.05, momentum=0.5, maximize=True),
    dict(lr=0.05, weight_decay=0.1, maximize=True),
]
ADAM_OPTIONS = [dict(lr=0.01, amsgrad=a, weight_decay=w, maximize=m)
                for a, w, m in itertools.product([False, True], [0.0, 0.1], [False, True])]
ADAM_OPTIONS += [dict(lr=0.02, betas=(0.5, 0.9), eps=1e-6), dict(lr=0.01, betas=(0.0, 0.99))]  # lerp's other formula


def _id(o):
    return ",".join(f"{k}={v}" for k, v in o.items())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("opts", SGD_OPTIONS, ids=_id)
def test_sgd_matches_torch(device, opts):
    inits, grads = data(1)
    for dtype in dtypes_for(device):
        ours, ref, _, _ = check_matches_torch(*makers("SGD", **opts), device, dtype, inits, grads)
        if dtype == bm.float32 and TORCH_FMA:  # the same formula order: the same bits
            np.testing.assert_array_equal(ours[0], ref[0])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("opts", ADAM_OPTIONS, ids=_id)
def test_adam_matches_torch(device, cls, opts):
    inits, grads = data(2)
    dtypes = dtypes_for(device) if opts.get("amsgrad") and opts.get("weight_decay") else [bm.float32]
    for dtype in dtypes:
        _, _, opt, topt = check_matches_torch(*makers(cls, **opts), device, dtype, inits, grads)
        if dtype == bm.float32:  # the moments too
            s = next(iter(opt.state.values()))
            ts = next(iter(topt.state.values()))
            for key in ts:
                if key != "step":
                    np.testing.assert_allclose(s[key].numpy(), ts[key].numpy(), rtol=1e-6, atol=1e-7)
            assert s["step"].item() == ts["step"].item() == STEPS


@pytest.mark.skipif(not TORCH_FMA, reason="torch's kernels fuse multiply-adds only with AVX2 / AVX-512")
@pytest.mark.parametrize("device", DEVICES)
def test_adam_is_torchs_formula_to_the_bit(device, monkeypatch):
    """With torch's sqrt replaced by a correctly rounded one, 50 float32 Adam/AdamW steps agree to the bit."""
    orig = torch.Tensor.sqrt
    monkeypatch.setattr(torch.Tensor, "sqrt", lambda self: orig(self.double()).to(self.dtype))
    inits, grads = data(3)
    for cls, opts in [("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)), ("AdamW", dict(lr=0.01, maximize=True))]:
        ours, ref, _, _ = run_pair(*makers(cls, **opts), device, bm.float32, inits, grads)
        np.testing.assert_array_equal(ours[0], ref[0])


@pytest.mark.parametrize("device", DEVICES)
def test_strided_params_and_grads(device):
    """A transposed parameter, step-sliced gradients, broadcast gradients: the same results as torch."""
    rng = np.random.default_rng(4)
    base = rng.standard_normal((5, 7)).astype(np.float32)
    p = bm.nn.Parameter(bm.tensor(base, device=device).T)  # (7, 5), transposed strides
    tp = torch.nn.Parameter(torch.tensor(base).T.contiguous())
    assert not p.is_contiguous()
    opt = bm.optim.Adam([p], lr=0.01, amsgrad=True)
    topt = torch.optim.Adam([tp], lr=0.01, amsgrad=True, foreach=False)
    for i in range(20):
        big = rng.standard_normal((14, 10)).astype(np.float32)
        if i % 2:
            p.grad = bm.tensor(big, device=device)[::2, 1::2]
            tp.grad = torch.tensor(big[::2, 1::2].copy())
        else:
            row = rng.standard_normal((1, 5)).astype(np.float32)
            p.grad = bm.tensor(row, device=device).expand(7, 5)
            tp.grad = torch.tensor(np.broadcast_to(row, (7, 5)).copy())
        opt.step()
        topt.step()
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_param_groups_with_different_options(device):
    inits, grads = data(5, n=3)

    def adam_groups(ps):
        return [{"params": ps[:2], "lr": 0.02}, {"params": ps[2:], "weight_decay": 0.1, "amsgrad": True}]

    _, _, opt, _ = check_matches_torch(*makers("AdamW", lr=0.005), device, bm.float32, inits, grads, adam_groups)
    assert [g["lr"] for g in opt.param_groups] == [0.02, 0.005]

    def sgd_groups(ps):
        return [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.1, "momentum": 0.9, "nesterov": True}]

    check_matches_torch(*makers("SGD", lr=0.01), device, bm.float32, inits, grads, sgd_groups)


def test_params_without_grad_are_skipped():
    a, b = bm.nn.Parameter(bm.ones(3)), bm.nn.Parameter(bm.ones(3))
    opt = bm.optim.Adam([a, b], lr=0.1)
    a.grad = bm.ones(3)
    opt.step()
    assert b.numpy().tolist() == [1, 1, 1] and b not in opt.state and len(opt.state[a]) == 3
    sgd = bm.optim.SGD([a, b], lr=0.1, momentum=0.9)
    sgd.step()
    assert b not in sgd.state and "momentum_buffer" in sgd.state[a]


def test_zero_grad():
    p = bm.nn.Parameter(bm.ones(2, 2))
    opt = bm.optim.SGD([p], lr=0.1)
    p.grad = bm.ones(2, 2)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.numpy().tolist() == [[0, 0], [0, 0]]
    opt.zero_grad()
    assert p.grad is None


def _clone_state_dict(sd):
    """What saving and loading a checkpoint does: fresh tensors, same structure."""
    return {"state": {k: {n: (v.clone() if isinstance(v, bm.Tensor) else v) for n, v in s.items()}
                      for k, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls,opts", [("Adam", dict(lr=0.01, amsgrad=True)), ("AdamW", dict(lr=0.01)),
                                      ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True))])
def test_state_dict_round_trip_then_continue(device, cls, opts):
    inits, grads = data(6, n=2)
    make = getattr(bm.optim, cls)

    def params():
        return [bm.nn.Parameter(bm.tensor(a, device=device)) for a in inits]

    def steps(ps, opt, gs):
        for g in gs:
            for p, gi in zip(ps, g):
                p.grad = bm.tensor(gi, device=device)
            opt.step()

    ref = params()
    ref_opt = make([{"params": ref[:1]}, {"params": ref[1:], "lr": 0.02}], **opts)
    steps(ref, ref_opt, grads)

    first = params()
    first_opt = make([{"params": first[:1]}, {"params": first[1:], "lr": 0.02}], **opts)
    steps(first, first_opt, grads[:20])
    sd = _clone_state_dict(first_opt.state_dict())
    resumed = [bm.nn.Parameter(p.clone()) for p in first]
    opt = make([{"params": resumed[:1]}, {"params": resumed[1:], "lr": 0.5}], **opts)
    opt.load_state_dict(sd)
    assert [g["lr"] for g in opt.param_groups] == [opts["lr"], 0.02]
    steps(resumed, opt, grads[20:])
    for a, b in zip(resumed, ref):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_state_dict_has_torchs_structure():
    inits, grads = data(7, n=2, steps=3)
    for cls, opts in [("Adam", dict(amsgrad=True)), ("AdamW", {}), ("SGD", dict(lr=0.1, momentum=0.9))]:
        _, _, opt, topt = run_pair(*makers(cls, **opts), "cpu", bm.float32, inits, grads)
        sd, tsd = opt.state_dict(), topt.state_dict()
        assert set(sd) == set(tsd) == {"state", "param_groups"}
        assert [set(g) for g in sd["param_groups"]] == [set(g) for g in tsd["param_groups"]]
        assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in tsd["param_groups"]] == [[0, 1]]
        assert set(sd["state"]) == set(tsd["state"]) == {0, 1}
        for i in (0, 1):
            assert list(sd["state"][i]) == list(tsd["state"][i])
            for key, v in sd["state"][i].items():
                tv = tsd["state"][i][key]
                assert isinstance(v, bm.Tensor) and tuple(v.shape) == tuple(tv.shape)
                if key == "step":  # a 0-d float32 tensor on the cpu, as torch keeps it
                    assert v.dtype == bm.float32 and str(v.device) == "cpu" and v.item() == tv.item() == 3


def test_load_state_dict_errors():
    a, b = bm.nn.Parameter(bm.ones(2)), bm.nn.Parameter(bm.ones(2))
    one = bm.optim.Adam([a, b])
    two = bm.optim.Adam([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        one.load_state_dict(two.state_dict())
    small = bm.optim.Adam([a])
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        one.load_state_dict(small.state_dict())


def test_argument_errors_match_torch():
    p = [bm.nn.Parameter(bm.ones(2))]
    cases = [
        (lambda: bm.optim.SGD(p, lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda: bm.optim.SGD(p, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
        (lambda: bm.optim.SGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (lambda: bm.optim.SGD(p, nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero"),
        (lambda: bm.optim.Adam(p, lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
        (lambda: bm.optim.Adam(p, eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
        (lambda: bm.optim.Adam(p, betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (lambda: bm.optim.AdamW(p, betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (lambda: bm.optim.AdamW(p, weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
        (lambda: bm.optim.Adam([]), ValueError, "optimizer got an empty parameter list"),
        (lambda: bm.optim.Adam(p[0]), TypeError, "should be an iterable of Tensors or dicts"),
        (lambda: bm.optim.Adam([1.0]), TypeError, "optimizer can only optimize Tensors"),
        (lambda: bm.optim.Adam([{"params": p}, {"params": p}]), ValueError, "more than one parameter group"),
        (lambda: bm.optim.Adam([{"params": {p[0]}}]), TypeError, "ordered collections"),
        (lambda: bm.optim.Adam(p, capturable=True), ValueError, r"\[Adam\] capturable=True is not supported"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
    # torch raises the same for the same arguments
    tp = [torch.nn.Parameter(torch.ones(2))]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        torch.optim.SGD(tp, lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        torch.optim.SGD(tp, nesterov=True)


@pytest.mark.parametrize("device", DEVICES)
def test_kernel_argument_errors(device):
    p = bm.nn.Parameter(bm.ones(3, 2, device=device))
    step = bm.tensor(0.0, device="cpu")
    m, v = bm.zeros(3, 2, device=device), bm.zeros(3, 2, device=device)
    with pytest.raises(ValueError, match=r"\[sgd_step\] grad has shape \(2, 3\) but param has shape \(3, 2\)"):
        _core._sgd_step_(p, bm.ones(2, 3, device=device), None, 0.1)
    with pytest.raises(TypeError, match=r"\[adam_step\] grad has dtype float16 but param has dtype float32"):
        _core._adam_step_(p, bm.ones(3, 2, dtype=bm.float16, device=device), m, v, None, step)
    with pytest.raises(ValueError, match=r"\[adam_step\] amsgrad=True needs a max_exp_avg_sq"):
        _core._adam_step_(p, bm.ones(3, 2, device=device), m, v, None, step, amsgrad=True)
    with pytest.raises(ValueError, match=r"\[adam_step\] exp_avg is updated in place but several of its elements"):
        _core._adam_step_(p, bm.ones(3, 2, device=device), bm.zeros(1, 2, device=device).expand(3, 2), v, None, step)
    with pytest.raises(bm.UnsupportedError, match=r"\[sgd_step\] expected a floating point param, got int32"):
        _core._sgd_step_(bm.ones(3, dtype=bm.int32, device=device), bm.ones(3, dtype=bm.int32, device=device), None)
    with pytest.raises(ValueError, match=r"\[adam_step\] step must be a 0-d tensor"):
        _core._adam_step_(p, bm.ones(3, 2, device=device), m, v, None, bm.zeros(1))
    assert step.item() == 0 and p.numpy().tolist() == [[1, 1]] * 3  # nothing ran
    others = [d for d in DEVICES if d != device]
    for other in others:
        with pytest.raises(bm.DeviceMismatchError, match=r"\[sgd_step\] inputs are on different devices: param on "):
            _core._sgd_step_(p, bm.ones(3, 2, device=other), None, 0.1)
    for other in [d for d in DEVICES if d != "cpu"]:  # the step count lives on the host
        with pytest.raises(bm.DeviceMismatchError, match=r"\[adam_step\] step must be a 0-d tensor on cpu"):
            _core._adam_step_(p, bm.ones(3, 2, device=device), m, v, None, bm.tensor(0.0, device=other))


def test_empty_and_0d_params():
    for shape in [(), (0,), (3, 0)]:
        p = bm.nn.Parameter(bm.ones(*shape))
        opt = bm.optim.Adam([p], lr=0.1)
        p.grad = bm.ones(*shape)
        opt.step()
        assert opt.state[p]["step"].item() == 1
        tp = torch.nn.Parameter(torch.ones(shape))
        topt = torch.optim.Adam([tp], lr=0.1, foreach=False)
        tp.grad = torch.ones(shape)
        topt.step()
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [lambda p: bm.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: bm.optim.Adam(p, lr=0.1, amsgrad=True)], ids=["sgd", "adam_amsgrad"])
def test_step_bumps_the_version_of_every_tensor_it_writes(device, make):
    """A fused step writes the parameter and its state in place: each one's version moves, as torch's
    in-place ops do, so a tensor saved for backward from that memory (or anything keyed on the
    version) sees the write."""
    p = bm.nn.Parameter(bm.ones(3, 4, device=device))
    opt = make([p])
    p.grad = bm.ones(3, 4, device=device)
    opt.step()  # creates the state
    state = {k: v for k, v in opt.state[p].items() if isinstance(v, bm.Tensor) and k != "step"}
    assert state, "the step keeps no state tensors"
    before = {k: v._version for k, v in state.items()}
    before_p = p._version
    opt.step()
    assert p._version > before_p
    for k, v in state.items():
        assert v._version > before[k], f"{k} was written by the step without a version bump"


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
def test_one_launch_per_parameter_and_no_host_wait(device):
    ps = [bm.nn.Parameter(bm.ones(4, 3, device=device)) for _ in range(5)]
    for p in ps:
        p.grad = bm.ones(4, 3, device=device)
    for opt in [bm.optim.Adam(ps, amsgrad=True), bm.optim.SGD(ps, lr=0.1, momentum=0.9)]:
        opt.step()  # first step: state allocation
        bm.synchronize(device)
        _core.reset_queue_stats(device)
        opt.step()
        stats = _core.queue_stats(device)
        assert stats["dispatches"] == len(ps) and stats["waits"] == 0, stats
