"""A first look at bessemer: tensors, views, broadcasting, reductions and a tiny linear model."""

import time

import numpy as np

import bessemer as bm

print("bessemer", bm.__version__, "devices:", [str(d) for d in bm.available_devices()])

x = bm.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x =", x)
print("x.T (a view, strides", x.T.stride(), ") =", x.T)
print("x[:, ::2] =", x[:, ::2])
print("x * 10 + [1, 2, 3] =", x * 10 + bm.tensor([1.0, 2.0, 3.0]))
print("sum over dim 0 =", x.sum(dim=0), " mean =", x.mean().item(), " var(dim=1) =", x.var(dim=1))
print("softmax over the last dim =", x.softmax(dim=-1))

# Least squares by gradient descent on y = X @ w_true, every step on the default device.
rng = np.random.default_rng(0)
X = bm.tensor(rng.standard_normal((256, 8)).astype(np.float32))
w_true = bm.tensor(rng.standard_normal((8, 1)).astype(np.float32))
y = X @ w_true
w = bm.zeros(8, 1)
t0 = time.perf_counter()
for _ in range(200):
    grad = X.T @ (X @ w - y) * (2.0 / X.shape[0])
    w = w - 0.1 * grad
err = (w - w_true).abs().max().item()
print(f"recovered w_true to max error {err:.2e} in {time.perf_counter() - t0:.3f} s")
