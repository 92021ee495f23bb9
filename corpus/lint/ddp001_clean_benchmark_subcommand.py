"""A trainer with a click command line: `python cli.py benchmark` times the model's
forward pass as one process on the first GPU (no process group: GPU 0 is right), and
`torchrun --nproc_per_node=4 cli.py train` trains it with DDP, where a hard-coded GPU 0
(and `.cuda()` with no `set_device`) puts every rank on the same GPU."""

import time

import click
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def build_model():
    return torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))


@click.group()
def cli():
    pass


@cli.command()
@click.option("--steps", default=100)
def benchmark(steps):
    model = build_model().to("cuda:0")
    batch = torch.randn(64, 512, device="cuda:0")
    start = time.perf_counter()
    for _ in range(steps):
        model(batch)
    torch.cuda.synchronize()
    print(f"{(time.perf_counter() - start) / steps * 1000:.2f} ms per step")


@cli.command()
@click.option("--epochs", default=10)
def train(epochs):
    dist.init_process_group("nccl")
    model = DDP(build_model().to("cuda:0"))  # expect: DDP001
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        loss = model(torch.randn(64, 512).cuda()).pow(2).mean()  # expect: DDP020
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    cli()
