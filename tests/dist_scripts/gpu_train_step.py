"""A training step on every GPU of one host under NCCL, for `inductor-lens torchrun` (see
tests/fixtures/make_dist_fixtures.sh).

    gpu_train_step.py ddp [--diverge]     DistributedDataParallel; with --diverge, rank 1's second batch is
                                          longer, so rank 1 recompiles and the other ranks do not
    gpu_train_step.py fsdp2               torch.distributed.fsdp.fully_shard on each block, then the model

Two steps (forward, backward, optimizer) of a small transformer-like model in bfloat16 autocast."""

import os
import sys

import torch
import torch.distributed as dist


class Block(torch.nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class Net(torch.nn.Module):
    def __init__(self, d=256, layers=2):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(layers))
        self.head = torch.nn.Linear(d, 16)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x).float().pow(2).mean()


def main(mode: str, diverge: bool, cpu: bool = False) -> None:
    """``cpu``: a smoke test of this script on CPU (gloo), a smaller model, no autocast."""
    local = int(os.environ["LOCAL_RANK"])
    if cpu:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    else:
        device = torch.device("cuda", local)
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", device_id=device)
    rank = dist.get_rank()
    torch.manual_seed(0)
    d = 32 if cpu else 256
    model = Net(d).to(device)
    if mode == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=None if cpu else [local])
    elif mode == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for b in model.blocks:
            fully_shard(b)
        fully_shard(model)
    else:
        raise SystemExit(f"mode must be ddp or fsdp2, not {mode!r}")
    step = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for i, tokens in enumerate([64, 65 if (diverge and rank == 1) else 64]):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=not cpu):
            loss = step(torch.randn(8, tokens, d, device=device))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"rank {rank} step {i}: loss {loss.item():.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ddp", "--diverge" in sys.argv, "--cpu" in sys.argv)
