"""A trainer that saves each epoch's state to a file of its own, then the same state onto
`latest.pt`, which a restart loads. A crash while `latest.pt` is written leaves the epoch
file complete beside it: the run loses nothing, so the plain save is only shown under
--preview."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(out_dir, epochs=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = torch.load(os.path.join(out_dir, "features.pt"))
    dataset = TensorDataset(data["x"], data["y"])
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    net = DistributedDataParallel(nn.Linear(128, 4).cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(net.parameters(), lr=3e-4)
    latest = os.path.join(out_dir, "latest.pt")
    start = 0
    if os.path.exists(latest):
        state = torch.load(latest, map_location="cpu")
        net.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        start = state["epoch"] + 1
    for epoch in range(start, epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dist.get_rank() == 0:
            state = {"model": net.module.state_dict(), "optim": opt.state_dict(), "epoch": epoch}
            torch.save(state, os.path.join(out_dir, f"epoch_{epoch:03d}.pt"))
            torch.save(state, latest)  # expect-preview: DDP014
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    train(os.environ.get("OUT_DIR", "runs"))
