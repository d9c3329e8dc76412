"""The README's first command runs examples/quickstart.py: keep it working."""

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run(name, *args):
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, check=True,
                          timeout=600).stdout


def test_quickstart():
    out = run("quickstart.py")
    assert "recovered w_true to max error" in out
    err = float(out.split("max error ")[1].split()[0])
    assert err < 1e-3


def test_resnet18_example(tmp_path):
    out = run("resnet18.py", "--runs", "1")
    assert "ResNet-18 on cpu" in out and out.count("class ") == 5 and "time:" in out
