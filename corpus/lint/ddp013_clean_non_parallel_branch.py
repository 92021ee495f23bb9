"""A trainer started either by torchrun with `--parallel` or as one plain process: the
`else` of `if FLAGS.parallel and world_size > 1:` is the one-process run, so its save
has no other rank to collide with. The parallel run's save is on every rank."""

import os

import torch
import torch.distributed as dist
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_bool("parallel", False, "train on several GPUs")


def train(rank, world_size, steps=100):
    if world_size > 1:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(8, 8).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for step in range(steps):
        loss = model(torch.randn(4, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.save(model.state_dict(), f"weights_{step}.pt")


def main(argv):
    world_size = int(os.getenv("WORLD_SIZE", 1))
    if FLAGS.parallel and world_size > 1:
        train(int(os.getenv("RANK", 0)), world_size)  # expect: DDP013
    else:
        train(0, world_size)


if __name__ == "__main__":
    app.run(main)
