"""A tiny DDP job for `inductor-lens torchrun --nproc-per-node 2` on CPU (gloo): rank 1's second batch is
one row longer, so rank 1 recompiles and rank 0 does not. Forward only (no_grad), to keep CI fast."""

import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(torch.nn.Module):  # a module of the user's own: dynamo does not trace torch's own frames on their own
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x)) * 2


def _ready():
    """With ``--ready-dir DIR``: touch DIR/rank<N> once this rank is where the hang test wants it."""
    if "--ready-dir" in sys.argv:
        open(os.path.join(sys.argv[sys.argv.index("--ready-dir") + 1], f"rank{rank}"), "w").close()


dist.init_process_group("gloo")
rank = dist.get_rank()
if "--crash-rank" in sys.argv and rank == int(sys.argv[sys.argv.index("--crash-rank") + 1]):
    os._exit(3)  # dies at once, without a word: no report from this rank
if "--hang-rank" in sys.argv and rank == int(sys.argv[sys.argv.index("--hang-rank") + 1]):
    print(f"rank {rank} hangs", flush=True)
    _ready()
    time.sleep(3600)  # hangs: the other rank waits for it inside a gloo collective, in C++
torch.manual_seed(0)
if "--hang-rank" in sys.argv:
    print(f"rank {rank} waits in a collective", flush=True)
    _ready()
model = DDP(Net())  # broadcasts the parameters: a collective
step = torch.compile(model)
with torch.no_grad():
    for _i, rows in enumerate([16, 17 if rank == 1 else 16]):
        out = step(torch.randn(rows, 8))
        total = out.sum()
        dist.all_reduce(total)
dist.barrier()
dist.destroy_process_group()
