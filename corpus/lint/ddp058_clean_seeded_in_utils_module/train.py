"""Seeds torch with the same value on every rank (`utils.set_seed`) before it splits the
dataset with `random_split` and no generator: every rank draws the same permutation, holds
the same training part, and the sampler shards that one part."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, random_split

from utils import set_seed


def main(dataset, net, epochs, seed=0):
    set_seed(seed)
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    n_val = len(dataset) // 10
    train_set, _ = random_split(dataset, [len(dataset) - n_val, n_val])
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
