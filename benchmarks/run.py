"""Run every benchmark: python benchmarks/run.py [name ...]"""

import importlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

if __name__ == "__main__":
    names = sys.argv[1:] or sorted(p.stem for p in pathlib.Path(__file__).parent.glob("bench_*.py"))
    for n in names:
        importlib.import_module(n if n.startswith("bench_") else f"bench_{n}").main()
