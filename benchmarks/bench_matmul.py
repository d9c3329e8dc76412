"""matmul: float32 square products (BLAS), a transposed operand (BLAS flag, no copy), a batched
product with a shared weight (folded into one gemm) and float16 (converted to float32 for BLAS)."""

from common import bm, compare, header, np, torch


def _square(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n), dtype=np.float32)


def _bench_square(n: int) -> None:
    a, b = _square(n, 0), _square(n, 1)
    ba, bb = bm.from_numpy(a), bm.from_numpy(b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    compare(f"matmul {n}x{n} @ {n}x{n} float32", {
        "bessemer": lambda: ba @ bb,
        "numpy": lambda: a @ b,
        "torch": lambda: ta @ tb,
    }, work=2.0 * n**3, goal=("numpy", 1.0))


def main() -> None:
    header("matmul")
    for n in (256, 512, 1024, 2048, 4096):
        _bench_square(n)

    n = 1024
    a, b = _square(n, 2), _square(n, 3)
    ba, bb = bm.from_numpy(a), bm.from_numpy(b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    compare(f"matmul {n} a.T @ b float32 (strided)", {
        "bessemer": lambda: ba.T @ bb,
        "numpy": lambda: a.T @ b,
        "torch": lambda: ta.T @ tb,
    }, work=2.0 * n**3, goal=("numpy", 0.9))

    rng = np.random.default_rng(4)
    x = rng.standard_normal((32, 128, 512), dtype=np.float32)
    w = rng.standard_normal((512, 512), dtype=np.float32)
    bx, bw, tx, tw = bm.from_numpy(x), bm.from_numpy(w), torch.from_numpy(x), torch.from_numpy(w)
    compare("matmul (32,128,512) @ (512,512) float32", {
        "bessemer": lambda: bx @ bw,
        "numpy": lambda: x @ w,
        "torch": lambda: tx @ tw,
    }, work=2.0 * 32 * 128 * 512 * 512, goal=("numpy", 0.9))

    n = 256
    a16, b16 = _square(n, 5).astype(np.float16), _square(n, 6).astype(np.float16)
    ba16, bb16 = bm.from_numpy(a16), bm.from_numpy(b16)
    ta16, tb16 = torch.from_numpy(a16), torch.from_numpy(b16)
    compare(f"matmul {n}x{n} float16", {
        "bessemer": lambda: ba16 @ bb16,
        "numpy": lambda: a16 @ b16,
        "torch": lambda: ta16 @ tb16,
    }, work=2.0 * n**3)


if __name__ == "__main__":
    main()
