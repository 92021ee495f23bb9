"""Ray actors given a GPU: Ray makes only the actor's own GPU visible to it, so inside
the actor that GPU is `cuda:0`, whichever physical GPU it is. The torchrun entry point
beside them has no such help: every rank would take GPU 0."""

import os

import ray
import torch
import torch.distributed as dist
from torch import nn


@ray.remote(num_gpus=1)
class PolicyTrainer:
    def __init__(self, rank, world_size):
        os.environ["RANK"] = str(rank)
        os.environ["WORLD_SIZE"] = str(world_size)
        torch.cuda.set_device(torch.device("cuda", 0))
        dist.init_process_group("nccl")
        self.model = nn.Linear(32, 32).to("cuda:0")

    def step(self, batch):
        loss = self.model(batch.to("cuda:0")).pow(2).mean()
        loss.backward()
        return loss.item()


@ray.remote(num_gpus=1)
def score(weights):
    return torch.as_tensor(weights, device="cuda:0").norm().item()


def start(world_size):
    return [PolicyTrainer.remote(rank, world_size) for rank in range(world_size)]


def main():
    dist.init_process_group("nccl")
    model = nn.Linear(32, 32).to("cuda:0")  # expect: DDP001
    return model


if __name__ == "__main__":
    main()
