"""The model and its optimizer come from one builder; the wrap goes through a helper.
DDP keeps the module's own parameters, so an optimizer built before the wrap is fine
(pytorch#59147): nothing to report."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build(cfg):
    model = nn.Sequential(nn.Linear(cfg["dim"], 128), nn.ReLU(), nn.Linear(128, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return model, optimizer


def wrap_ddp(module, local_rank):
    module = module.cuda(local_rank)
    return DistributedDataParallel(module, device_ids=[local_rank], gradient_as_bucket_view=True)


def main(cfg):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model, optimizer = build(cfg)
    model = wrap_ddp(model, local_rank)
    head = nn.Linear(cfg["dim"], 1)
    head_optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    head = wrap_ddp(head, local_rank)
    data = TensorDataset(torch.randn(4096, cfg["dim"]), torch.randn(4096, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x) + head(x), y)
            optimizer.zero_grad()
            head_optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            head_optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main({"dim": 32, "lr": 0.05, "epochs": 10})
