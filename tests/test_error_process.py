"""Error messages that format a float, each in a fresh process, whatever that process loaded first.

A `_core` that exported its own statically linked libstdc++ (std::locale & co.) had part of it bound
to the libstdc++ that torch or NumPy loaded: the first such message came out with a blank number
(gcc 12 here) or crashed the process (gcc 13). Each case runs in its own interpreter, so the import
order is the one named and a crash fails this test instead of ending the run. tools/check_build.sh
runs this against a -static-libstdc++ wheel (docs/building.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import bessemer as bm
from harness import DEVICES

# argv: <modules to import before bessemer> -- <modules to import after it> -- <devices>
SCRIPT = r"""
import sys
args = sys.argv[1:]
before, after, devices = args[:args.index("--")], args[args.index("--") + 1:], []
after, devices = after[:after.index("--")], after[after.index("--") + 1:]
for name in before:
    __import__(name)
import bessemer as bm
import bessemer.nn.functional as F
for name in after:
    __import__(name)
calls = [
    lambda d: F.dropout(bm.ones(3, device=d), -0.1),
    lambda d: F.dropout(bm.ones(3, device=d), 1.25, training=False),
    lambda d: F.cross_entropy(bm.zeros(4, 5, device=d), bm.tensor([0, 1, 2, 3], device=d), label_smoothing=1.5),
]
for d in devices:
    for call in calls:
        try:
            call(d)
            print("no error")
        except ValueError as e:
            print(e)
"""

WANT = [
    "[dropout] dropout probability has to be between 0 and 1, but got -0.1",
    "[dropout] dropout probability has to be between 0 and 1, but got 1.25",
    "[cross_entropy] label_smoothing must be between 0.0 and 1.0, got 1.5",
]


@pytest.mark.parametrize("before,after", [
    ((), ()),  # bessemer imports NumPy first itself
    (("torch",), ()),
    ((), ("torch",)),
], ids=["without-torch", "torch-first", "torch-after"])
def test_float_in_error_message_in_a_fresh_process(before, after):
    # the bessemer this process imported (an installed wheel in CI, the source tree when developing)
    here = os.path.dirname(os.path.dirname(os.path.abspath(bm.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))
    cmd = [sys.executable, "-c", SCRIPT, *before, "--", *after, "--", *DEVICES]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    # a negative return code is the signal that killed it (-11: the segmentation fault of the bug)
    assert res.returncode == 0, f"exit status {res.returncode}\n{res.stderr[-3000:]}"
    assert res.stdout.splitlines() == WANT * len(DEVICES)
