"""A fine-tuning trainer that resumes from `model_dir/G_latest.pth`, rewritten in place at
every evaluation, and copies the same weights to a Colab Drive folder when one is mounted.
The resume file is the proven finding. The Drive copy has the same file name in another,
literal folder: no load reads it back, so its finding is unproven."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.module.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"]


def main(model_dir="logs/speaker", epochs=100):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(2048, 80), torch.randn(2048, 80))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(80, 80).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    start = 0
    if os.path.exists(os.path.join(model_dir, "G_latest.pth")):
        start = load_checkpoint(os.path.join(model_dir, "G_latest.pth"), model, optimizer)
    for epoch in range(start, epochs):
        sampler.set_epoch(epoch)
        for mel, target in loader:
            loss = nn.functional.l1_loss(model(mel.cuda(local_rank)), target.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                     "epoch": epoch}
            torch.save(state, os.path.join(model_dir, "G_latest.pth"))  # expect: DDP014
            if os.path.exists("/content/drive/MyDrive/"):
                torch.save(state, os.path.join("/content/drive/MyDrive/", "G_latest.pth"))  # expect-preview: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
