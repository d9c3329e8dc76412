"""bessemer.utils.data against torch.utils.data: batches, collation, drop_last, samplers; shuffling
from Philox generators (the same seed gives the same order in any process and on any device, and
a generator's state resumes it); clear errors."""

import collections
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import bessemer as bm
from bessemer.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    TensorDataset,
    default_collate,
)
from harness import DEVICES


def to_np(x):
    """bessemer / torch tensors -> numpy, recursively (lists, tuples, dicts)."""
    if isinstance(x, bm.Tensor):
        return x.numpy()
    if isinstance(x, torch.Tensor):
        return x.numpy()
    if isinstance(x, dict):
        return {k: to_np(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_np(v) for v in x) if not hasattr(x, "_fields") else type(x)(*(to_np(v) for v in x))
    return x


def assert_same_batch(a, b):
    """Same structure, same values, same numpy dtypes."""
    a, b = to_np(a), to_np(b)
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same_batch(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_batch(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batch_size,drop_last", [(4, False), (4, True), (1, False), (10, False), (3, True)])
def test_tensor_dataset_batches_match_torch(device, batch_size, drop_last):
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10, dtype=np.int64)
    ds = TensorDataset(bm.tensor(x, device=device), bm.tensor(y, device=device))
    tds = tud.TensorDataset(torch.tensor(x), torch.tensor(y))
    dl = DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
    tdl = tud.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(dl) == len(tdl) and len(ds) == len(tds) == 10
    batches = list(dl)
    assert len(batches) == len(tdl)
    for b, tb in zip(batches, tdl):
        assert all(str(t.device) == device for t in b)
        assert_same_batch(b, tb)


class Samples(Dataset):
    """Samples of every kind default_collate handles."""

    Point = collections.namedtuple("Point", ["x", "y"])

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return {
            "array": np.full((2, 2), i, dtype=np.float32),
            "int_array": np.arange(3, dtype=np.int32) + i,
            "float": i / 2,
            "int": i,
            "bool": i % 2 == 0,
            "np_scalar": np.float32(i) * 1.5,
            "name": f"s{i}",
            "pair": (i, float(i)),
            "list": [i, i + 1],
            "point": self.Point(i, np.float64(i) / 3),
            "nested": {"a": np.ones(2, dtype=np.float64) * i},
        }


class TorchSamples(tud.Dataset):
    def __init__(self):
        self.s = Samples()

    def __len__(self):
        return len(self.s)

    def __getitem__(self, i):
        d = self.s[i]
        d["point"] = TorchSamples.Point(*d["point"])
        return d

    Point = Samples.Point


def test_default_collation_matches_torch():
    batches = list(DataLoader(Samples(), batch_size=4))
    tbatches = list(tud.DataLoader(TorchSamples(), batch_size=4))
    assert len(batches) == 2
    for b, tb in zip(batches, tbatches):
        assert_same_batch(b, tb)
    b = batches[0]
    assert b["float"].dtype == bm.float64 and b["int"].dtype == bm.int64 and b["bool"].dtype == bm.bool
    assert b["array"].dtype == bm.float32 and tuple(b["array"].shape) == (4, 2, 2)
    assert b["name"] == ["s0", "s1", "s2", "s3"] and isinstance(b["pair"], list)


def test_default_collate_stacks_bessemer_tensors_on_their_device():
    for device in DEVICES:
        batch = default_collate([bm.ones(2, 3, device=device) * i for i in range(4)])
        assert tuple(batch.shape) == (4, 2, 3) and str(batch.device) == device
        np.testing.assert_array_equal(batch.numpy()[:, 0, 0], [0, 1, 2, 3])


def test_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([bm.ones(2), bm.ones(3)])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([np.ones(2), np.ones(3)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


def test_no_batching_converts_only():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    items = list(DataLoader([x[0], x[1], x[2]], batch_size=None))
    assert len(items) == 3 and isinstance(items[0], bm.Tensor) and tuple(items[0].shape) == (2,)
    assert list(DataLoader([(1, np.float32(2.0))], batch_size=None))[0][0] == 1


def order(loader):
    return [int(v) for batch in loader for v in batch[0].numpy()]


def shuffled(seed, device="cpu", n=50, batch_size=8):
    ds = TensorDataset(bm.arange(n))
    return DataLoader(ds, batch_size=batch_size, shuffle=True, generator=bm.Generator(device).manual_seed(seed))


def test_shuffle_is_a_deterministic_permutation():
    a, b, c = order(shuffled(7)), order(shuffled(7)), order(shuffled(8))
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert a == b and a != c
    loader = shuffled(7)
    first, second = order(loader), order(loader)
    assert first == a and second != first and sorted(second) == list(range(50))  # a new order each epoch


def test_shuffle_order_is_the_same_on_every_device():
    orders = [order(shuffled(11, device)) for device in DEVICES]
    assert all(o == orders[0] for o in orders)


def test_shuffle_order_is_the_same_in_another_process():
    code = textwrap.dedent("""
        import bessemer as bm
        from bessemer.utils.data import DataLoader, TensorDataset
        dl = DataLoader(TensorDataset(bm.arange(50)), batch_size=8, shuffle=True,
                        generator=bm.Generator("cpu").manual_seed(7))
        print([int(v) for b in dl for v in b[0].numpy()])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert eval(out.stdout) == order(shuffled(7))


def test_generator_state_resumes_the_stream():
    loader = shuffled(3)
    order(loader)  # epoch 1
    state = loader.generator.get_state()
    epoch2 = order(loader)
    order(loader)  # epoch 3 moves the stream on
    loader.generator.set_state(state)
    assert order(loader) == epoch2


def test_default_generator_and_rng_state():
    ds = TensorDataset(bm.arange(20))
    bm.manual_seed(5)
    a = order(DataLoader(ds, batch_size=4, shuffle=True))
    state = bm.get_rng_state()
    b = order(DataLoader(ds, batch_size=4, shuffle=True))
    bm.manual_seed(5)
    assert order(DataLoader(ds, batch_size=4, shuffle=True)) == a
    bm.set_rng_state(state)
    assert order(DataLoader(ds, batch_size=4, shuffle=True)) == b
    with pytest.raises(TypeError, match=r"\[set_state\] expected a \(seed, offset\) pair"):
        bm.set_rng_state(5)


def test_samplers():
    ds = list(range(10))
    assert list(SequentialSampler(ds)) == list(range(10))
    g = bm.Generator().manual_seed(0)
    rs = RandomSampler(ds, generator=g, num_samples=25)
    idx = list(rs)
    assert len(idx) == len(rs) == 25 and set(idx[20:]) <= set(range(10)) and len(set(idx[20:])) == 5
    assert sorted(idx[:10]) == list(range(10)) and sorted(idx[10:20]) == list(range(10))
    rep = list(RandomSampler(ds, replacement=True, num_samples=100, generator=g))
    assert len(rep) == 100 and set(rep) <= set(range(10)) and len(set(rep)) > 5
    bs = BatchSampler(SequentialSampler(ds), 4, drop_last=False)
    assert list(bs) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(bs) == 3
    assert list(BatchSampler(ds, 4, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(BatchSampler(ds, 4, drop_last=True)) == 2
    # a custom sampler / batch_sampler in a DataLoader
    dl = DataLoader(ds, batch_sampler=[[3, 1], [0]])
    assert [b.numpy().tolist() for b in dl] == [[3, 1], [0]]
    dl = DataLoader(ds, sampler=[9, 8, 7], batch_size=2)
    assert [b.numpy().tolist() for b in dl] == [[9, 8], [7]]


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.numpy().tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.numpy().tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


def test_errors():
    ds = list(range(10))
    cases = [
        (lambda: DataLoader(ds, sampler=[1], shuffle=True), ValueError, "sampler option is mutually exclusive"),
        (lambda: DataLoader(ds, batch_sampler=[[1]], batch_size=2), ValueError, "batch_sampler option is mutually"),
        (lambda: DataLoader(ds, batch_size=None, drop_last=True), ValueError, "mutually exclusive with drop_last"),
        (lambda: DataLoader(ds, num_workers=-1), ValueError, "num_workers option should be non-negative"),
        (lambda: DataLoader(ds, batch_size=0), ValueError, "batch_size should be a positive integer value"),
        (lambda: DataLoader(ds, shuffle=True, generator=1), TypeError, r"\[DataLoader\] generator must be"),
        (lambda: BatchSampler(ds, 2, drop_last=1), ValueError, "drop_last should be a boolean value"),
        (lambda: RandomSampler(ds, replacement=1), TypeError, "replacement should be a boolean value"),
        (lambda: RandomSampler(ds, num_samples=0), ValueError, "num_samples should be a positive integer value"),
        (lambda: TensorDataset(bm.ones(3), bm.ones(4)), ValueError, "Size mismatch between tensors"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
    dl = DataLoader(ds, batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    with pytest.warns(UserWarning, match="worker processes are not supported yet"):
        dl = DataLoader(ds, batch_size=5, num_workers=2)
    assert [b.numpy().tolist() for b in dl] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    # torch raises the same messages
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        tud.DataLoader(ds, sampler=[1], shuffle=True)
