"""Hand-pose regression trained by steps: `torchrun --nproc_per_node=4 train.py`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import TensorDataset

from provider import BatchProvider


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(4096, 63), torch.randn(4096, 21 * 3))
    provider = BatchProvider(data, batch_size=32, distributed=True)
    model = DDP(nn.Sequential(nn.Linear(63, 256), nn.ReLU(), nn.Linear(256, 63)).cuda(),
                device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(40):
        for _ in range(provider.steps_per_epoch):
            joints, target = provider.next()
            loss = nn.functional.l1_loss(model(joints.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "pose.pt.tmp")
            os.replace("pose.pt.tmp", "pose.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
