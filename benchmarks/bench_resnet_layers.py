"""Where ResNet-18 inference spends its time: each stage of the network (stem conv, bn + relu,
maxpool, every BasicBlock, head) timed on its own input, bessemer CPU vs torch CPU (NCHW), float32,
224x224. The conv rows of bench_conv.py split the blocks further.

python benchmarks/bench_resnet_layers.py [batch ...]
"""

import pathlib
import sys

from common import bm, compare, header, np, torch


def stages(model, flatten):
    """(name, callable) for each stage of a torchvision-style ResNet, in order."""
    out = [("conv1 7x7 s2", model.conv1), ("bn1 + relu", lambda x: model.relu(model.bn1(x))),
           ("maxpool", model.maxpool)]
    for li in range(1, 5):
        for bi, block in enumerate(getattr(model, f"layer{li}")):
            out.append((f"layer{li}.{bi}", block))
    out.append(("avgpool + fc", lambda x: model.fc(flatten(model.avgpool(x)))))
    return out


def main() -> None:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
    from torch_resnet import TorchResNet18

    torch.manual_seed(0)
    tmodel = TorchResNet18().eval()
    model = bm.models.resnet18().eval()
    model.load_state_dict({k: bm.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    batches = [int(a) for a in sys.argv[1:] if a.isdigit()] or [1, 8]
    header("resnet18 stage by stage")
    for batch in batches:
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224), dtype=np.float32)
        bx, tx = bm.from_numpy(x), torch.from_numpy(x)
        total = {"bessemer": 0.0, "torch": 0.0}
        with torch.no_grad(), bm.no_grad():  # inference on both sides
            for (name, bf), (_, tf) in zip(stages(model, lambda t: t.flatten(1)),
                                           stages(tmodel, lambda t: torch.flatten(t, 1))):
                times = compare(f"b{batch} {name}", {"bessemer": lambda bf=bf, bx=bx: bf(bx).numpy(),
                                                     "torch": lambda tf=tf, tx=tx: tf(tx)})
                for k in total:
                    total[k] += times[k]
                bx, tx = bf(bx), tf(tx)
        ours, theirs = total["bessemer"] * 1e3, total["torch"] * 1e3
        print(f"b{batch} sum of stages: bessemer {ours:.1f} ms, torch {theirs:.1f} ms, vs torch {theirs / ours:.2f}x",
              flush=True)


if __name__ == "__main__":
    main()
