"""Tensor.register_post_accumulate_grad_hook and autograd.queue_callback (what DistributedDataParallel
builds on), against torch's behaviour for the same expression."""

import numpy as np
import pytest
import torch

import bessemer as bm


def test_hook_sees_each_accumulated_grad_once_per_backward_like_torch():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    events = {"bm": [], "torch": []}
    for lib, mod in (("bm", bm), ("torch", torch)):
        w = mod.tensor(x, requires_grad=True)
        b = mod.tensor(x[:2].copy(), requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p, lib=lib: events[lib].append(("w", p.grad.numpy().tolist())))
        b.register_post_accumulate_grad_hook(lambda p, lib=lib: events[lib].append(("b", p.grad.numpy().tolist())))
        for _ in range(2):  # w is used twice per pass: one accumulation, one hook call
            ((w * w).sum() + (w[:2] * b).sum() * 3).backward()
    assert sorted(events["bm"]) == sorted(events["torch"]) and len(events["bm"]) == 4


def test_hook_receives_the_tensor_and_can_be_removed():
    w = bm.ones(3, requires_grad=True)
    seen = []
    h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p))
    (w * 2).sum().backward()
    assert len(seen) == 1 and seen[0] is w
    h.remove()
    h.remove()  # a second remove does nothing
    (w * 2).sum().backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(w.grad.numpy(), [4, 4, 4])


def test_hook_fires_for_backward_with_inputs():
    a, b = bm.ones(2, requires_grad=True), bm.ones(2, requires_grad=True)
    fired = []
    a.register_post_accumulate_grad_hook(lambda p: fired.append("a"))
    b.register_post_accumulate_grad_hook(lambda p: fired.append("b"))
    (a * b * 3).sum().backward(inputs=[a])
    assert fired == ["a"]


def test_hook_errors():
    w = bm.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[register_post_accumulate_grad_hook\] .*non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match=r"\[register_post_accumulate_grad_hook\] .*doesn't require gradient"):
        bm.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(TypeError, match=r"\[register_post_accumulate_grad_hook\] the hook must be callable"):
        w.register_post_accumulate_grad_hook(3)


def test_an_exception_in_a_hook_reaches_the_caller_and_the_next_backward_works():
    w = bm.ones(2, requires_grad=True)

    def boom(p):
        raise KeyError("from the hook")

    h = w.register_post_accumulate_grad_hook(boom)
    with pytest.raises(KeyError, match="from the hook"):
        (w * 3).sum().backward()
    h.remove()
    w.grad = None
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3, 3])


def test_queue_callback_runs_after_every_hook_of_the_pass():
    layers = [bm.ones(2, requires_grad=True) for _ in range(3)]
    log = []

    def hook(p):
        log.append("hook")
        if log.count("hook") == 1:

            def end():
                log.append("end")
                bm.autograd.queue_callback(lambda: log.append("2nd"))

            bm.autograd.queue_callback(end)

    for p in layers:
        p.register_post_accumulate_grad_hook(hook)
    (layers[0] * layers[1] * layers[2]).sum().backward()
    assert log == ["hook", "hook", "hook", "end", "2nd"]
    with pytest.raises(RuntimeError, match=r"\[queue_callback\] can only be called while a backward pass is running"):
        bm.autograd.queue_callback(lambda: None)
