"""Every rank builds the dataset right after joining the group: the helper downloads
CIFAR in place from every process at once."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from data import build_dataset


def main(data_path="data", epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset_train = build_dataset(True, data_path)  # expect: DDP025
    if dist.get_rank() != 0:
        dist.barrier()
    dataset_val = build_dataset(False, data_path)
    if dist.get_rank() == 0:
        dist.barrier()
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 100)).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sampler = DistributedSampler(dataset_train, shuffle=True, drop_last=True)
    loader = DataLoader(dataset_train, batch_size=128, sampler=sampler, num_workers=4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
    return dataset_val


if __name__ == "__main__":
    main()
