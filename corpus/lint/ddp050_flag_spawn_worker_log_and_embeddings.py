"""An `mp.spawn` trainer whose worker sets up logging with `filemode="w"` and, after
training, saves the embeddings of its own shard to one `embeddings.npy`: every worker
truncates the same two files."""

import argparse
import logging
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, world_size, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    logging.basicConfig(filename=os.path.join(args.out, "run.log"), filemode="w", level=logging.INFO)  # expect: DDP050
    model = DDP(torch.nn.Linear(16, 8).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(1024, 16))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss = model(x.cuda(rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        logging.info("epoch %d loss %.4f", epoch, loss.item())
    embeddings = []
    with torch.no_grad():
        for (x,) in loader:
            embeddings.append(model.module(x.cuda(rank)).cpu().numpy())
    np.save(os.path.join(args.out, "embeddings.npy"), np.concatenate(embeddings))  # expect: DDP050
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runs")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    args = parser.parse_args()
    mp.spawn(worker, args=(args.gpus, args), nprocs=args.gpus)
