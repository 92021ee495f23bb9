"""After training, the best epoch's weights go once into a folder named after that epoch
(`best-7`), retried a few times on a flaky network file system: the retry loop leaves
after the first save that succeeds, and no earlier good file lives at that path."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(cfg):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    net = DistributedDataParallel(nn.Linear(16, 2).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    best = {"epoch": 0, "loss": float("inf"), "weights": None}
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        total = 0.0
        for x, y in loader:
            loss = nn.functional.cross_entropy(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        if total < best["loss"]:
            best = {"epoch": epoch, "loss": total, "weights": net.module.state_dict()}
    if dist.get_rank() == 0:
        folder = os.path.join(cfg["out"], "best-{}".format(best["epoch"]))
        os.makedirs(folder, exist_ok=True)
        tries = 0
        while tries < 5:
            try:
                torch.save(best["weights"], os.path.join(folder, "weights.pt"))
                torch.save(cfg, os.path.join(folder, "config.bin"))
                break
            except OSError:
                tries += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    train({"epochs": 20, "out": "runs"})
