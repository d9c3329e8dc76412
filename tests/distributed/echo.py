"""Run by tests/test_distributed.py: what a rank sees of its environment and world."""

import os
import sys

import bessemer as bm
import bessemer.distributed as dist

dist.init_process_group()
t = bm.tensor([float(dist.get_rank())])
dist.all_reduce(t)
print(f"rank={dist.get_rank()} world={dist.get_world_size()} env_rank={os.environ.get('RANK')} "
      f"local={os.environ.get('LOCAL_RANK')} sum={t.item():g} args={' '.join(sys.argv[1:])}", flush=True)
dist.destroy_process_group()
