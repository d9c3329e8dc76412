"""Read-only NumPy memory is never written (docs/numpy.md): each write path a tensor over a read-only
array can meet — nn layers' running statistics, optimizer steps, nn.init, load_state_dict, gradient
accumulation, numpy() and the buffer protocol — raises a RuntimeError naming the op before it writes
anything, or writes elsewhere. Each test has a writeable twin showing the path does write. Entry
points and dtypes are in test_numpy_inputs.py."""

import numpy as np
import pytest

import bessemer as bm
from bessemer import nn
from harness import DEVICES


def readonly(a) -> np.ndarray:
    a = np.array(a, dtype=np.float32)
    a.flags.writeable = False
    return a


READONLY = r"cannot write into a read-only tensor"


@pytest.mark.parametrize("writeable", [False, True])
def test_batch_norm_running_stats(writeable):
    mean, var = np.zeros(3, np.float32), np.ones(3, np.float32)
    mean.flags.writeable = writeable
    before_mean, before_var = mean.copy(), var.copy()
    x = bm.randn(4, 3, 2, 2)
    rm, rv = bm.from_numpy(mean), bm.from_numpy(var)
    if writeable:  # control: training updates the running statistics in place
        bm.nn.functional.batch_norm(x, rm, rv, training=True)
        assert not np.array_equal(mean, before_mean) and not np.array_equal(var, before_var)
        return
    with pytest.raises(RuntimeError, match=rf"\[batch_norm \(running_mean\)\] {READONLY}"):
        bm.nn.functional.batch_norm(x, rm, rv, training=True)
    # running_var is writeable, but nothing is written when the op is refused
    np.testing.assert_array_equal(mean, before_mean)
    np.testing.assert_array_equal(var, before_var)
    # evaluation only reads them
    out = bm.nn.functional.batch_norm(x, rm, rv, training=False)
    np.testing.assert_allclose(out.numpy(), x.numpy() / np.sqrt(1 + 1e-5), rtol=1e-6)


def test_batch_norm_layer_with_readonly_buffers():
    m = nn.BatchNorm2d(3)
    m.running_var = bm.from_numpy(readonly(np.ones(3)))
    calls = m.num_batches_tracked.item()
    with pytest.raises(RuntimeError, match=rf"\[batch_norm \(running_var\)\] {READONLY}"):
        m(bm.randn(2, 3, 2, 2))
    assert m.num_batches_tracked.item() == calls
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3, np.float32))
    m.running_var = bm.ones(3)
    m.num_batches_tracked = bm.from_numpy(np.zeros((), np.int64)).clone()
    nbt = np.zeros((), np.int64)
    nbt.flags.writeable = False
    m.num_batches_tracked = bm.from_numpy(nbt)
    with pytest.raises(RuntimeError, match=rf"\[BatchNorm2d \(num_batches_tracked\)\] {READONLY}"):
        m(bm.randn(2, 3, 2, 2))
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3, np.float32))
    m.eval()
    m(bm.randn(2, 3, 2, 2))  # evaluation writes nothing


@pytest.mark.parametrize("make", [
    lambda ps: bm.optim.SGD(ps, lr=0.1),
    lambda ps: bm.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: bm.optim.Adam(ps, lr=0.1),
    lambda ps: bm.optim.AdamW(ps, lr=0.1, amsgrad=True),
], ids=["sgd", "sgd-momentum", "adam", "adamw-amsgrad"])
@pytest.mark.parametrize("writeable", [False, True])
def test_optimizer_step_on_readonly_parameter(make, writeable):
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    a.flags.writeable = writeable
    before = a.copy()
    p = nn.Parameter(bm.from_numpy(a))
    (p * p).sum().backward()
    opt = make([p])
    if writeable:  # control: the step writes into the array's memory
        opt.step()
        assert not np.array_equal(a, before)
        return
    op = "sgd_step" if isinstance(opt, bm.optim.SGD) else "adam_step"
    with pytest.raises(RuntimeError, match=rf"\[{op}\] param is updated in place but its memory belongs to a "
                                           "read-only NumPy array"):
        opt.step()
    np.testing.assert_array_equal(a, before)
    for state in opt.state.values():  # nothing else moved either
        if "step" in state:
            assert float(state["step"]) == 0


def test_adam_state_readonly():
    p = nn.Parameter(bm.ones(3))
    p.grad = bm.ones(3)
    opt = bm.optim.Adam([p])
    opt.step()
    opt.state[p]["exp_avg_sq"] = bm.from_numpy(readonly(np.zeros(3)))
    w = p.detach().clone()
    with pytest.raises(RuntimeError, match=r"\[adam_step\] exp_avg_sq is updated in place but its memory belongs"):
        opt.step()
    assert float(opt.state[p]["step"]) == 1
    np.testing.assert_array_equal(p.detach().numpy(), w.numpy())
    opt.state[p]["exp_avg_sq"] = bm.zeros(3)
    opt.state[p]["step"] = bm.from_numpy(readonly(np.array(1.0)))
    with pytest.raises(RuntimeError, match=rf"\[adam_step \(the step count\)\] {READONLY}"):
        opt.step()


@pytest.mark.parametrize("name,fn", [
    ("uniform_", lambda t: nn.init.uniform_(t)),
    ("normal_", lambda t: nn.init.normal_(t)),
    ("constant_", lambda t: nn.init.constant_(t, 3.0)),
    ("zeros_", nn.init.zeros_),
    ("ones_", nn.init.ones_),
    ("uniform_", lambda t: nn.init.kaiming_uniform_(t)),
    ("normal_", lambda t: nn.init.kaiming_normal_(t)),
    ("uniform_", lambda t: nn.init.xavier_uniform_(t)),
    ("normal_", lambda t: nn.init.xavier_normal_(t)),
])
def test_nn_init(name, fn):
    a = readonly(np.full((3, 4), 7.0))
    with pytest.raises(RuntimeError, match=rf"\[{name}\] {READONLY}"):
        fn(bm.from_numpy(a))
    np.testing.assert_array_equal(a, 7.0)
    w = np.full((3, 4), 7.0, np.float32)  # control
    fn(bm.from_numpy(w))
    assert not np.array_equal(w, 7.0)


def test_load_state_dict_into_readonly_changes_nothing():
    m = nn.Linear(3, 2)
    m.bias = nn.Parameter(bm.from_numpy(readonly(np.zeros(2))))
    w = m.weight.detach().clone().numpy()
    sd = {"weight": bm.ones(2, 3), "bias": bm.ones(2)}
    with pytest.raises(ValueError, match=r"'bias': the model's tensor is read-only"):
        m.load_state_dict(sd)
    np.testing.assert_array_equal(m.weight.detach().numpy(), w)  # the weight before it was not written either
    m2 = nn.Linear(3, 2)  # read-only sources are only read
    m2.load_state_dict({"weight": bm.from_numpy(readonly(np.ones((2, 3)))), "bias": bm.from_numpy(readonly([1, 2]))})
    np.testing.assert_array_equal(m2.bias.detach().numpy(), [1, 2])


def test_gradient_accumulates_beside_a_readonly_grad():
    a = readonly([1.0, 1.0])
    p = bm.ones(2, requires_grad=True)
    p.grad = bm.from_numpy(a)
    (p * 3).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [4, 4])
    np.testing.assert_array_equal(a, [1, 1])
    assert not p.grad.is_readonly
    w = np.ones(2, np.float32)  # control: a writeable .grad is accumulated into in place
    q = bm.ones(2, requires_grad=True)
    q.grad = bm.from_numpy(w)
    (q * 3).sum().backward()
    np.testing.assert_array_equal(w, [4, 4])


def test_numpy_views_of_readonly_tensors_are_readonly():
    a = readonly(np.arange(6).reshape(2, 3))
    t = bm.from_numpy(a)
    for view in (t.numpy(), np.asarray(t), np.asarray(t[1]), t.T.numpy()):
        assert not view.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            view[...] = 0
    assert memoryview(t).readonly
    c = np.array(t)  # an explicit copy is the caller's own
    c[...] = 0
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))
    w = bm.from_numpy(np.zeros(3, np.float32))  # control: a writeable tensor's numpy() is writeable
    assert w.numpy().flags.writeable and not memoryview(w).readonly


@pytest.mark.parametrize("device", DEVICES)
def test_array_protocol_copy_argument(device):
    t = bm.tensor([1.0, 2.0], device=device)
    if device != "cpu":
        with pytest.raises(ValueError, match=r"\[__array__\] .* without a copy"):
            np.asarray(t, copy=False)
    else:
        np.asarray(t, copy=False)[0] = 5  # shares memory: no copy needed
        assert t.tolist() == [5.0, 2.0]
    c = np.array(t, copy=True)
    c[1] = 9
    assert t.tolist()[1] == 2.0


@pytest.mark.parametrize("device", DEVICES)
def test_views_and_copies_of_readonly_tensors(device):
    a = readonly(np.arange(12).reshape(3, 4))
    t = bm.from_numpy(a)
    for v in (t[1:], t.T, t.reshape(12), t.view(4, 3), t.unsqueeze(0), t.detach(), t.expand(2, 3, 4)):
        assert v.is_readonly
        with pytest.raises(RuntimeError, match=rf"\[add_\] {READONLY}"):
            v.add_(1)
    c = t.to(device) if device != "cpu" else t.clone()
    assert not c.is_readonly
    c.add_(1)
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4))
    # out-of-place ops read it freely, on every device
    np.testing.assert_array_equal((t.to(device) * 2).numpy(), a * 2)


def test_memmap_modes(tmp_path):
    path = tmp_path / "m.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    r = np.memmap(path, dtype=np.float32, mode="r")
    t = bm.from_numpy(r)
    assert t.is_readonly
    with pytest.raises(RuntimeError, match=rf"\[mul_\] {READONLY}"):
        t.mul_(2)
    rw = np.memmap(path, dtype=np.float32, mode="r+")
    bm.from_numpy(rw).mul_(2)  # shared: the write reaches the file
    rw.flush()
    del rw
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.float32), np.arange(6) * 2)


def test_internal_overlap_is_refused_as_torch_does():
    """A writeable array with zero strides (as_strided) shares one location between elements:
    an elementwise in-place write into it has no single answer, so it is refused (as torch)."""
    base = np.zeros(1, np.float32)
    a = np.lib.stride_tricks.as_strided(base, shape=(3,), strides=(0,), writeable=True)
    t = bm.from_numpy(a)
    assert not t.is_readonly
    for name, write in [("add_", lambda: t.add_(1)), ("clamp_", lambda: t.clamp_(0, 1)),
                        ("copy_", lambda: t.copy_(bm.ones(3))), ("uniform_", lambda: nn.init.uniform_(t))]:
        with pytest.raises(ValueError, match=rf"\[{name}\] unsupported operation: more than one element"):
            write()
    np.testing.assert_array_equal(base, [0])
    t.fill_(2)  # one value for every element: allowed, as in torch
    np.testing.assert_array_equal(base, [2])


@pytest.mark.parametrize("name,fn", [
    ("clip_grad_norm_", lambda ps: nn.utils.clip_grad_norm_(ps, 0.1)),
    ("clip_grad_value_", lambda ps: nn.utils.clip_grad_value_(ps, 0.1)),
    ("zero_grad", lambda ps: bm.optim.SGD(ps, lr=0.1).zero_grad(set_to_none=False)),
])
def test_gradient_utilities_refuse_before_writing_any(name, fn):
    first, second = nn.Parameter(bm.ones(3)), nn.Parameter(bm.ones(3))
    first.grad = bm.full([3], 5.0)
    second.grad = bm.from_numpy(readonly(np.full(3, 5.0)))
    with pytest.raises(RuntimeError, match=rf"\[{name}\] {READONLY}"):
        fn([first, second])
    np.testing.assert_array_equal(first.grad.numpy(), 5.0)  # the writeable one was not written either
    second.grad = bm.full([3], 5.0)  # control
    fn([first, second])
    assert not np.array_equal(second.grad.numpy(), 5.0)
