"""A matting trainer that moves its sampler to the epoch inside the batch loop. The
DataLoader asked the sampler for the pass's order when the `for` started, so the call only
orders the next pass: epochs 0 and 1 both read epoch 0's order, and every later epoch the
previous one's."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=40):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    frames = TensorDataset(torch.randn(2048, 4, 64, 64), torch.rand(2048, 1, 64, 64))
    train_sampler = DistributedSampler(frames, shuffle=True)
    train_loader = DataLoader(frames, batch_size=8, sampler=train_sampler, num_workers=4)
    model = DDP(nn.Conv2d(4, 1, 3, padding=1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        for step, (image, alpha) in enumerate(train_loader):
            train_sampler.set_epoch(epoch)  # expect: DDP002
            pred = torch.sigmoid(model(image.to(device)))
            loss = nn.functional.l1_loss(pred, alpha.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
