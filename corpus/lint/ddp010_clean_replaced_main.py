"""An evaluation script edited in place: the first `main` was kept above its replacement,
and Python binds the name to the second one before the `__main__` block calls it. The old
version's rank-0-only all-reduce never runs; the new one reduces on every rank."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build(local_rank):
    data = torch.load("val_features.pt")
    dataset = TensorDataset(data["x"], data["y"])
    sampler = DistributedSampler(dataset, shuffle=False)  # expect-preview: DDP003
    loader = DataLoader(dataset, batch_size=128, sampler=sampler)
    model = nn.Linear(512, 2).cuda()
    model.load_state_dict(torch.load("detector.pth", map_location="cpu"))
    return DistributedDataParallel(model, device_ids=[local_rank]), loader


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model, loader = build(local_rank)
    correct = torch.zeros(2, device="cuda")
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.cuda()).argmax(1)
            correct += torch.stack([(pred == y.cuda()).sum(), torch.tensor(len(y), device="cuda")])
    if dist.get_rank() == 0:
        dist.all_reduce(correct)
        print("accuracy", (correct[0] / correct[1]).item())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model, loader = build(local_rank)
    correct = torch.zeros(2, device="cuda")
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.cuda()).argmax(1)
            correct += torch.stack([(pred == y.cuda()).sum(), torch.tensor(len(y), device="cuda")])
    dist.all_reduce(correct)
    if dist.get_rank() == 0:
        print("accuracy", (correct[0] / correct[1]).item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
