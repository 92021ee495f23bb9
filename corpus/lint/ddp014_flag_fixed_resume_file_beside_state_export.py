"""A depth-completion trainer that restarts by itself from `last_checkpoint.pt` when the
file exists. The full checkpoint is written in place (a crash mid-write leaves a file the
next start loads); the weights-only `last_model.pt` written beside it is an export nothing
restarts from."""
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def save_checkpoint(output_dir, epoch, model, optimizer):
    torch.save(  # expect: DDP014
        {
            "epoch": epoch,
            "model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
        },
        output_dir / "last_checkpoint.pt",
    )
    torch.save(model.state_dict(), output_dir / "last_model.pt")  # expect-preview: DDP014


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    output_dir = Path("runs/depth")
    output_dir.mkdir(parents=True, exist_ok=True)
    data = TensorDataset(torch.randn(1024, 4, 32, 32), torch.rand(1024, 1, 32, 32))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler, drop_last=True)
    net = nn.Sequential(nn.Conv2d(4, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 3, padding=1))
    net.cuda()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-4)
    start_epoch = 1
    resume_path = output_dir / "last_checkpoint.pt"
    resume_state = None
    if resume_path.exists():
        ckpt = torch.load(resume_path, map_location="cuda", weights_only=True)
        resume_state = ckpt["model_state_dict"]
        net.load_state_dict(resume_state, strict=False)
        optimizer.load_state_dict(ckpt["optimizer_state_dict"])
        start_epoch = ckpt["epoch"] + 1
    model = DDP(net, device_ids=[local_rank])
    for epoch in range(start_epoch, 61):
        sampler.set_epoch(epoch)
        for sparse, dense in loader:
            optimizer.zero_grad()
            nn.functional.l1_loss(model(sparse.cuda()), dense.cuda()).backward()
            optimizer.step()
        if dist.get_rank() == 0:
            save_checkpoint(output_dir, epoch, model.module, optimizer)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
