"""On resume, the trainer replays the epochs already trained by taking one batch of each
(to advance the loaders' random state, as some trainers do): a peek, not a pass over the
data; the epochs it trains call `set_epoch` first."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(128, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(2048, 128), torch.randint(0, 10, (2048,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    start_epoch = 0
    if os.path.exists("last.pt"):
        state = torch.load("last.pt", map_location="cpu")
        model.module.load_state_dict(state["model"])
        start_epoch = state["epoch"] + 1
    for epoch in range(start_epoch):
        for _ in loader:
            break
    for epoch in range(start_epoch, 30):
        sampler.set_epoch(epoch)
        for features, labels in loader:
            loss = nn.functional.cross_entropy(model(features.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
