"""Run by tests/test_distributed.py: the object collectives (all_gather_object, gather_object,
broadcast_object_list, scatter_object_list) against what each rank sent, with objects of unequal
sizes, on the default group and a subgroup; their errors."""

import numpy as np

import bessemer.distributed as dist

dist.init_process_group()
R, N = dist.get_rank(), dist.get_world_size()


def thing(r):  # unequal sizes: rank r's object grows with r
    return {"rank": r, "name": "x" * (r * 1000), "array": np.arange(r + 1, dtype=np.float64) * 0.5, "none": None}


def same(a, b):
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a)


got = [None] * N
dist.all_gather_object(got, thing(R))
assert all(same(got[r], thing(r)) for r in range(N))

dst = N - 1
listed = [None] * N if R == dst else None
dist.gather_object(thing(R), listed, dst=dst)
assert listed is None or all(same(listed[r], thing(r)) for r in range(N))

objs = [thing(1), "two", (3, 4.5)] if R == 1 else [None, None, None]
dist.broadcast_object_list(objs, src=1)
assert same(objs[0], thing(1)) and objs[1:] == ["two", (3, 4.5)]

out = [None]
dist.scatter_object_list(out, [f"for {r}" for r in range(N)] if R == 0 else None, src=0)
assert out == [f"for {R}"]
print(f"rank {R}: object collectives", flush=True)

# On a subgroup: global ranks for src/dst, the group's size for the lists.
top = dist.new_group([N - 2, N - 1])
if R >= N - 2:
    pair = [None, None]
    dist.all_gather_object(pair, R * 10, group=top)
    assert pair == [(N - 2) * 10, (N - 1) * 10]
    box = ["mine"] if R == N - 1 else [None]
    dist.broadcast_object_list(box, src=N - 1, group=top)
    assert box == ["mine"]
print(f"rank {R}: object collectives on a subgroup", flush=True)

# Errors: a list of the wrong length raises before any data moves; a mismatch between ranks raises on all.
try:
    dist.all_gather_object([None] * (N + 1), R)
    raise SystemExit("a wrong object_list length went unreported")
except ValueError as e:
    assert "[all_gather_object] object_list must have one entry per rank of the group" in str(e), e
try:
    dist.broadcast_object_list([None] * (2 if R == 0 else 3), src=0)
    raise SystemExit("lists of different lengths went unreported")
except dist.CollectiveMismatchError as e:
    assert "broadcast_object_list from rank 0 of a list of 2" in str(e), e
try:
    dist.all_gather_object([None] * N, lambda: 0)
    raise SystemExit("an unpicklable object went unreported")
except TypeError as e:
    assert "[all_gather_object] the object cannot be pickled" in str(e), e
print(f"rank {R}: object collective errors", flush=True)
dist.destroy_process_group()
