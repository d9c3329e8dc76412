"""ResNet-18 inference on the device of your choice.

    python examples/resnet18.py                          # random weights, a synthetic image, cpu
    python examples/resnet18.py --device metal           # on the Apple GPU (metal-sim: the simulator)
    python examples/resnet18.py --weights resnet18.safetensors --image cat.npy --labels imagenet.txt

--weights: a safetensors file with torchvision's key names (e.g. exported from torchvision with
safetensors.torch.save_file(model.state_dict(), path)). --image: a .npy array (H, W, 3) uint8 or
(3, 224, 224) float already normalised. --labels: one class name per line.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bessemer as bm

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def load_image(path: str | None) -> np.ndarray:
    if path is None:  # a smooth synthetic image, the same every run
        y, x = np.mgrid[0:224, 0:224] / 224.0
        img = np.stack([np.sin(6 * x), np.cos(4 * y), x * y], axis=0).astype(np.float32)
        return img
    a = np.load(path)
    if a.ndim == 3 and a.shape[-1] == 3:  # H, W, 3 uint8: centre-crop 224 and normalise
        h, w, _ = a.shape
        top, left = max(0, (h - 224) // 2), max(0, (w - 224) // 2)
        a = a[top:top + 224, left:left + 224].astype(np.float32) / 255.0
        a = ((a - MEAN) / STD).transpose(2, 0, 1)
    return np.ascontiguousarray(a, dtype=np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--weights")
    ap.add_argument("--image")
    ap.add_argument("--labels")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    device = bm.device(args.device)
    model = bm.models.resnet18().eval()
    if args.weights:
        model.load_state_dict(bm.load_file(args.weights))
    model.to(device)
    x = bm.tensor(load_image(args.image)[None], device=device)
    labels = open(args.labels).read().splitlines() if args.labels else None

    times = []
    for _ in range(max(1, args.runs)):
        t0 = time.perf_counter()
        probs = bm.softmax(model(x), dim=-1)[0].numpy()  # numpy() waits for the device
        times.append(time.perf_counter() - t0)
    top = np.argsort(-probs)[:5]
    print(f"ResNet-18 on {device} ({'trained' if args.weights else 'random'} weights)")
    for rank, k in enumerate(top, 1):
        name = labels[k] if labels else f"class {k}"
        print(f"  {rank}. {name:<30} {probs[k]:.4f}")
    print(f"time: first run {times[0] * 1e3:.1f} ms, best of {len(times)} {min(times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
