"""A classifier trainer written for `torchrun --nproc_per_node=4 train.py`: the setup helper
pins the rendezvous address and port, then starts the process group from the environment the
launcher exported. The port it writes is not the one the launcher serves."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def ddp_setup():
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"  # expect: DDP061
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


class Trainer:
    def __init__(self, model, loader, optimizer):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.to(self.gpu_id), device_ids=[self.gpu_id])
        self.loader = loader
        self.optimizer = optimizer

    def run_epoch(self, epoch):
        self.loader.sampler.set_epoch(epoch)
        for source, targets in self.loader:
            source, targets = source.to(self.gpu_id), targets.to(self.gpu_id)
            self.optimizer.zero_grad()
            loss = nn.functional.cross_entropy(self.model(source), targets)
            loss.backward()
            self.optimizer.step()

    def train(self, epochs):
        for epoch in range(epochs):
            self.run_epoch(epoch)


def main(args):
    ddp_setup()
    data = TensorDataset(torch.randn(2048, 20), torch.randint(0, 4, (2048,)))
    loader = DataLoader(data, batch_size=args.batch_size, sampler=DistributedSampler(data), drop_last=True)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    Trainer(model, loader, optimizer).train(args.epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    main(parser.parse_args())
