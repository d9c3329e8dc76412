"""dropout, embedding, cross_entropy and linear on CPU against torch (numpy has no equivalents).

    PYTHONPATH=python python benchmarks/run.py nn_misc
"""

# common first: it sets the thread counts before torch and bessemer load their BLAS
from common import bm, compare, header, torch  # noqa: I001
import numpy as np
from bessemer.nn import functional as F


def main() -> None:
    header("nn misc: dropout / embedding / cross_entropy / linear (cpu)")
    rng = np.random.default_rng(0)

    x = rng.standard_normal((1024, 1024)).astype(np.float32)
    bx, tx = bm.tensor(x), torch.tensor(x)
    compare("dropout p=0.5 (1024, 1024)", {"bessemer": lambda: F.dropout(bx, 0.5),
                                           "torch": lambda: torch.nn.functional.dropout(tx, 0.5)},
            work=x.size, unit="Gelem/s")

    w = rng.standard_normal((30000, 512)).astype(np.float32)
    idx = rng.integers(0, 30000, (32, 128))
    bw, tw, bi, ti = bm.tensor(w), torch.tensor(w), bm.tensor(idx), torch.tensor(idx)
    compare("embedding (32, 128) rows of 512 from 30000", {
        "bessemer": lambda: F.embedding(bi, bw), "torch": lambda: torch.nn.functional.embedding(ti, tw)},
        work=idx.size * 512 * 4, unit="GB/s")

    logits = rng.standard_normal((256, 1000)).astype(np.float32)
    tgt = rng.integers(0, 1000, 256)
    bl, tl, bt, tt = bm.tensor(logits), torch.tensor(logits), bm.tensor(tgt), torch.tensor(tgt)
    compare("cross_entropy (256, 1000) mean", {
        "bessemer": lambda: F.cross_entropy(bl, bt), "torch": lambda: torch.nn.functional.cross_entropy(tl, tt)})
    compare("cross_entropy (256, 1000) label_smoothing=0.1", {
        "bessemer": lambda: F.cross_entropy(bl, bt, label_smoothing=0.1),
        "torch": lambda: torch.nn.functional.cross_entropy(tl, tt, label_smoothing=0.1)})

    for batch in (1, 8, 256):
        a = rng.standard_normal((batch, 512)).astype(np.float32)
        lw = rng.standard_normal((1000, 512)).astype(np.float32)
        lb = rng.standard_normal(1000).astype(np.float32)
        ba, bw2, bb = bm.tensor(a), bm.tensor(lw), bm.tensor(lb)
        ta, tw2, tb = torch.tensor(a), torch.tensor(lw), torch.tensor(lb)
        compare(f"linear ({batch}, 512) -> 1000 + bias", {
            "bessemer": lambda ba=ba, bw2=bw2, bb=bb: F.linear(ba, bw2, bb),
            "torch": lambda ta=ta, tw2=tw2, tb=tb: torch.nn.functional.linear(ta, tw2, tb)},
            work=2 * batch * 512 * 1000, goal=("torch", 1.0))


if __name__ == "__main__":
    main()
