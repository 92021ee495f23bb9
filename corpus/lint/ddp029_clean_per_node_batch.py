"""Multi-node launcher in the style of the classic ImageNet example: the batch option is the
batch of one node, split over its GPUs; the world size counts nodes times GPUs."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main_worker(gpu, ngpus_per_node, args):
    rank = args.node_rank * ngpus_per_node + gpu
    dist.init_process_group("nccl", init_method=args.dist_url,
                            world_size=args.world_size, rank=rank)
    torch.cuda.set_device(gpu)
    batch_size = int(args.batch_size / ngpus_per_node)
    dataset = TensorDataset(torch.randn(20000, 3, 8, 8), torch.randint(0, 10, (20000,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(192, 10)).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(gpu, non_blocking=True), y.cuda(gpu, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=256, help="batch of all GPUs of a node")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    args = parser.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    args.world_size = ngpus_per_node * args.nodes
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))


if __name__ == "__main__":
    main()
