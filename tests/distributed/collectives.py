"""Run by tests/test_distributed.py under the launcher: every collective, dtype, layout and device
against NumPy. Each rank draws every rank's inputs from seeds, so it knows the expected result."""

import itertools
import sys

import numpy as np

import bessemer as bm
import bessemer.distributed as dist

dist.init_process_group()
R, N = dist.get_rank(), dist.get_world_size()
D = bm.dtype
DTYPES = [D.float32, D.float64, D.float16, D.bfloat16, D.int8, D.uint8, D.int16, D.int32, D.int64, D.bool]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "0d"]
SENTINEL = 7
checks = 0


def values(case: int, rank: int, shape, dtype, lo=-3, hi=4) -> np.ndarray:
    rng = np.random.default_rng(1000 * case + rank)
    if dtype == D.bool:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == D.uint8:
        lo = max(lo, 0)
    return rng.integers(lo, hi, shape).astype(np.float64)


def on(vals: np.ndarray, dtype, device, layout):
    """(view with `vals` in `layout`, base tensor, mask of the base's elements inside the view)."""
    shape = vals.shape
    if layout in ("contiguous", "0d"):
        t = bm.tensor(vals.astype(np.float32 if dtype != D.bool else bool), dtype=dtype, device=device)
        return t, t, np.ones(shape, bool)
    if layout == "transposed":
        base_vals = np.swapaxes(vals, -1, -2).copy()
        base = bm.tensor(base_vals.astype(np.float32 if dtype != D.bool else bool), dtype=dtype, device=device)
        return base.transpose(-1, -2), base, np.ones(base_vals.shape, bool)
    full = np.full(tuple(2 * s + 1 for s in shape), SENTINEL % 2 if dtype == D.bool else SENTINEL, np.float64)
    idx = tuple(slice(1, None, 2) for _ in shape) if layout == "sliced" else tuple(slice(1, 1 + s) for s in shape)
    full[idx] = vals
    mask = np.zeros(full.shape, bool)
    mask[idx] = True
    base = bm.tensor(full.astype(np.float32 if dtype != D.bool else bool), dtype=dtype, device=device)
    return base[idx], base, mask


def as_np(t) -> np.ndarray:
    return (t.to(D.float32) if t.dtype in (D.bfloat16, D.float16) else t).numpy().astype(np.float64)


def expect(name, got_view, base, mask, want, base_before):
    global checks
    got = as_np(got_view)
    if not np.array_equal(got, np.asarray(want, np.float64)):
        sys.exit(f"rank {R}: {name}: got {got.ravel()[:8]} want {np.ravel(want)[:8]}")
    outside = as_np(base)[~mask] if base is not None else None
    if outside is not None and not np.array_equal(outside, base_before[~mask]):
        sys.exit(f"rank {R}: {name}: elements outside the view changed")
    checks += 1


def rounded(x: np.ndarray, dtype) -> np.ndarray:
    if dtype == D.bool:
        return x.astype(bool).astype(np.float64)
    return as_np(bm.tensor(x.astype(np.float64), dtype=D.float64).to(dtype))


REDUCE = {dist.ReduceOp.SUM: lambda a: a.sum(0), dist.ReduceOp.AVG: lambda a: a.mean(0),
          dist.ReduceOp.PRODUCT: lambda a: a.prod(0), dist.ReduceOp.MIN: lambda a: a.min(0),
          dist.ReduceOp.MAX: lambda a: a.max(0)}
BOOL_REDUCE = {dist.ReduceOp.SUM: lambda a: a.any(0), dist.ReduceOp.PRODUCT: lambda a: a.all(0),
               dist.ReduceOp.MIN: lambda a: a.all(0), dist.ReduceOp.MAX: lambda a: a.any(0)}

case = 0
for device, dtype, layout in itertools.product([str(d) for d in bm.available_devices()], DTYPES, LAYOUTS):
    if dtype == D.float64 and not device.startswith("cpu"):
        continue  # float64 lives on the CPU only
    shape = () if layout == "0d" else (3, 4)
    floating = dtype in (D.float32, D.float64, D.float16, D.bfloat16)
    tag = f"{device} {dtype} {layout}"
    # all_reduce, every op the dtype takes
    for op in (BOOL_REDUCE if dtype == D.bool else REDUCE):
        if op == dist.ReduceOp.AVG and not floating:
            continue
        case += 1
        every = np.stack([values(case, r, shape, dtype, *((1, 3) if op == dist.ReduceOp.PRODUCT else ()))
                          for r in range(N)])
        view, base, mask = on(every[R], dtype, device, layout)
        before = as_np(base)
        dist.all_reduce(view, op=op)
        want = (BOOL_REDUCE if dtype == D.bool else REDUCE)[op](every)
        expect(f"all_reduce {op.name} {tag}", view, base, mask, rounded(want, dtype), before)
    # broadcast from the last rank
    case += 1
    every = np.stack([values(case, r, shape, dtype) for r in range(N)])
    view, base, mask = on(every[R], dtype, device, layout)
    before = as_np(base)
    dist.broadcast(view, src=N - 1)
    expect(f"broadcast {tag}", view, base, mask, rounded(every[N - 1], dtype), before)
    # reduce to the last rank (SUM; for bool, "any"): the other ranks' tensors are only read
    case += 1
    every = np.stack([values(case, r, shape, dtype) for r in range(N)])
    view, base, mask = on(every[R], dtype, device, layout)
    before = as_np(base)
    dist.reduce(view, dst=N - 1)
    want = (every.any(0) if dtype == D.bool else every.sum(0)) if R == N - 1 else every[R]
    expect(f"reduce {tag}", view, base, mask, rounded(want, dtype), before)
    # gather to rank 0 into views; scatter from the last rank into a view
    case += 1
    every = np.stack([values(case, r, shape, dtype) for r in range(N)])
    src, _, _ = on(every[R], dtype, device, layout)
    outs = [on(np.zeros(shape, every.dtype), dtype, device, layout) for _ in range(N)] if R == 0 else []
    befores = [as_np(b) for _, b, _ in outs]
    dist.gather(src, [o for o, _, _ in outs] if R == 0 else None, dst=0)
    for r, ((o, b, m), bb) in enumerate(zip(outs, befores)):
        expect(f"gather[{r}] {tag}", o, b, m, rounded(every[r], dtype), bb)
    case += 1
    every = np.stack([values(case, r, shape, dtype) for r in range(N)])
    pieces = [on(every[r], dtype, device, layout)[0] for r in range(N)] if R == N - 1 else None
    out, base, mask = on(np.zeros(shape, every.dtype), dtype, device, layout)
    before = as_np(base)
    dist.scatter(out, pieces, src=N - 1)
    expect(f"scatter {tag}", out, base, mask, rounded(every[R], dtype), before)
    # all_gather into a list of views, and all_gather_into_tensor into a view
    case += 1
    every = np.stack([values(case, r, shape, dtype) for r in range(N)])
    src, _, _ = on(every[R], dtype, device, layout)
    outs = [on(np.zeros(shape, every.dtype), dtype, device, layout) for _ in range(N)]
    befores = [as_np(b) for _, b, _ in outs]
    dist.all_gather([o for o, _, _ in outs], src)
    for r, ((o, b, m), bb) in enumerate(zip(outs, befores)):
        expect(f"all_gather[{r}] {tag}", o, b, m, rounded(every[r], dtype), bb)
    if layout != "0d":
        out, base, mask = on(np.zeros((N * 3, 4), every.dtype), dtype, device, layout)
        before = as_np(base)
        dist.all_gather_into_tensor(out, src)
        expect(f"all_gather_into_tensor {tag}", out, base, mask, rounded(every.reshape(N * 3, 4), dtype), before)
        # reduce_scatter_tensor: input (N * 3, 4), output (3, 4)
        if dtype != D.bool:
            case += 1
            every = np.stack([values(case, r, (N * 3, 4), dtype) for r in range(N)])
            inp, _, _ = on(every[R], dtype, device, layout)
            out, base, mask = on(np.zeros((3, 4)), dtype, device, layout)
            before = as_np(base)
            dist.reduce_scatter_tensor(out, inp)
            want = every.sum(0)[R * 3:(R + 1) * 3]
            expect(f"reduce_scatter_tensor {tag}", out, base, mask, rounded(want, dtype), before)
    # send/recv around a ring, with isend/irecv
    case += 1
    every = np.stack([values(case, r, shape, dtype) for r in range(N)])
    src, _, _ = on(every[R], dtype, device, layout)
    out, base, mask = on(np.zeros(shape, every.dtype), dtype, device, layout)
    before = as_np(base)
    w = dist.isend(src, (R + 1) % N)
    got_from = dist.recv(out, src=None)
    w.wait()
    if got_from != (R - 1) % N:
        sys.exit(f"rank {R}: recv reported sender {got_from}")
    expect(f"send/recv {tag}", out, base, mask, rounded(every[(R - 1) % N], dtype), before)

# A broadcast (zero-stride) tensor is a valid input; as an output it is refused on every rank alike.
row = bm.tensor(np.arange(4, dtype=np.float32) + R).expand(3, 4)
outs = [bm.zeros(3, 4) for _ in range(N)]
dist.all_gather(outs, row)
for r in range(N):
    expect("all_gather of a broadcast view", outs[r], None, None, np.broadcast_to(np.arange(4) + r, (3, 4)), None)
try:
    dist.all_reduce(row)
    sys.exit("an all_reduce into a broadcast view was accepted")
except ValueError as e:
    assert "[all_reduce]" in str(e) and "broadcast view" in str(e), e
# Bad arguments: a clear error on the rank that made it, before anything is sent.
for call, kind, text in [
    (lambda: dist.all_gather_into_tensor(bm.zeros(N * 2 + 1), bm.zeros(2)), ValueError,
     f"[all_gather_into_tensor] output_tensor must hold world size ({N}) x the input_tensor's 2 elements"),
    (lambda: dist.reduce_scatter_tensor(bm.zeros(2), bm.zeros(N * 2 + 1)), ValueError,
     f"[reduce_scatter_tensor] input must hold world size ({N}) x the output's 2 elements"),
    (lambda: dist.all_gather([bm.zeros(2)] * (N + 1), bm.zeros(2)), ValueError, f"must be a list of {N} tensors"),
    (lambda: dist.all_gather([bm.zeros(2, dtype=bm.int32)] * N, bm.zeros(2)), TypeError, "has dtype"),
    (lambda: dist.broadcast(bm.zeros(2), N), ValueError, f"[broadcast] src must be a rank in [0, {N})"),
    (lambda: dist.all_reduce(bm.zeros(2, dtype=bm.int32), op=dist.ReduceOp.AVG), TypeError, "AVG needs a floating"),
    (lambda: dist.all_reduce(bm.zeros(2), op=dist.ReduceOp.BAND), TypeError, "BAND needs an integer"),
    (lambda: dist.all_reduce([1, 2]), TypeError, "[all_reduce] tensor must be a bessemer Tensor"),
    (lambda: dist.gather(bm.zeros(2), [bm.zeros(2)] * (N + 1), dst=R), ValueError,
     f"[gather] gather_list must be a list of {N} tensors"),
    (lambda: dist.scatter(bm.zeros(2), [bm.zeros(2)] * N, src=(R + 1) % N), ValueError,
     "[scatter] scatter_list must be None (or empty) on ranks other than"),
    (lambda: dist.reduce(bm.zeros(2), dst=-1), ValueError, f"[reduce] dst must be a rank in [0, {N})"),
]:
    try:
        call()
        sys.exit(f"rank {R}: accepted: {text}")
    except kind as e:
        assert text in str(e), (text, str(e))
        checks += 1
# async_op: the result arrives with wait()
t = bm.full((5,), float(R + 1))
work = dist.all_reduce(t, async_op=True)
work.wait()
expect("all_reduce async", t, None, None, np.full(5, N * (N + 1) / 2), None)
dist.barrier()
print(f"rank {R}: {checks} checks passed")
dist.destroy_process_group()
