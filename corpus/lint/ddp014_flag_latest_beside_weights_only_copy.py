"""Resumable training whose epoch files keep only the weights: the optimizer's moments and
the epoch counter live in `state-latest.pt` alone, which every epoch rewrites in place. A
crash mid-write loses the only copy of that state, so the save is reported."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(root="runs/exp", epochs=100):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = TensorDataset(torch.randn(10000, 32), torch.randn(10000, 1))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=100, sampler=sampler)
    model = DDP(nn.Linear(32, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    resume_file = os.path.join(root, "state-latest.pt")
    begin = 0
    if os.path.exists(resume_file):
        state = torch.load(resume_file, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        begin = state["epoch"] + 1
    for epoch in range(begin, epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), os.path.join(root, f"weights-{epoch}.pt"))
            state = {
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            torch.save(state, resume_file)  # expect: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
