"""The resume file is named by the run tag and `latest`: the tag stays the same within a
run, so every epoch writes over the previous resume file."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(tag="vit_pretrain", folder="logs"):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    rank = dist.get_rank()
    resume_path = os.path.join(folder, f"{tag}-latest.pth")
    model = DDP(nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def save_state(epoch):
        state = {"model": model.module.state_dict(), "opt": optimizer.state_dict(), "epoch": epoch}
        if rank == 0:
            torch.save(state, resume_path)  # expect-preview: DDP014

    for epoch in range(100):
        for _ in range(50):
            loss = model(torch.randn(8, 64, device="cuda")).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_state(epoch + 1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
