"""Self-supervised pretraining that resumes from its one checkpoint automatically: the
name holds the backbone and the total epoch count, fixed before the loop, so every epoch
rewrites the same file."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(backbone="resnet18", epochs=200):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(128, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    os.makedirs("checkpoints", exist_ok=True)
    checkpoint_path = "checkpoints/pretrain-{}-{}.pth".format(backbone, epochs)
    start_epoch = 0
    if os.path.exists(checkpoint_path):
        checkpoint = torch.load(checkpoint_path, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"]
    data = TensorDataset(torch.randn(1024, 128))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler, drop_last=True)
    for epoch in range(start_epoch, epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss = model(x.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1}
            torch.save(state, checkpoint_path)  # expect: DDP014


if __name__ == "__main__":
    main()
