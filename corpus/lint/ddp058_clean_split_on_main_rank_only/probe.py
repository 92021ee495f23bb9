"""Only rank 0 draws a random sample of the validation set for a quick qualitative check:
one process splits, so no two ranks disagree about it."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, random_split


def train(net, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            probe, _ = random_split(val_set, [16, len(val_set) - 16])
            with torch.no_grad():
                for x, y in DataLoader(probe, batch_size=16):
                    print(epoch, model.module(x.cuda()).argmax(1).tolist(), y.tolist())
