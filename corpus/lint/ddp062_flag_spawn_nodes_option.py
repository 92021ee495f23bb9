"""An image-captioning trainer that spawns one process per GPU and offers several machines
(`--nodes`, `--nr`): the world size counts every machine's processes, but the rendezvous
address is this machine's own."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train(gpu, args):
    rank = args.nr * args.gpus + gpu
    dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=rank)
    torch.cuda.set_device(gpu)
    data = TensorDataset(torch.randn(4096, 512), torch.randint(0, 5000, (4096, 20)))
    sampler = DistributedSampler(data, num_replicas=args.world_size, rank=rank)
    loader = DataLoader(data, batch_size=64, sampler=sampler, drop_last=True)
    decoder = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 20 * 5000))
    model = DDP(decoder.cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.Adam(model.parameters(), lr=4e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for features, captions in loader:
            logits = model(features.cuda(gpu)).view(-1, 20, 5000)
            loss = nn.functional.cross_entropy(logits.transpose(1, 2), captions.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", "--nodes", default=1, type=int, help="number of machines")
    parser.add_argument("-g", "--gpus", default=1, type=int, help="GPUs per machine")
    parser.add_argument("-nr", "--nr", default=0, type=int, help="rank of this machine")
    parser.add_argument("--epochs", default=30, type=int)
    args = parser.parse_args()
    args.world_size = args.gpus * args.nodes
    os.environ["MASTER_ADDR"] = "localhost"  # expect: DDP062
    os.environ["MASTER_PORT"] = "8888"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
