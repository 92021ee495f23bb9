"""ImageNet training whose final report runs on rank 0 through the bare module, unwrapped
with the usual `model.module if isinstance(model, DDP) else model`."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    train_set = datasets.ImageFolder("/data/imagenet/train", transforms.ToTensor())
    held_out = datasets.ImageFolder("/data/imagenet/holdout", transforms.ToTensor())
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=8)
    model = DDP(models.resnet50().to(device), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(90):
        sampler.set_epoch(epoch)
        model.train()
        for images, targets in loader:
            loss = nn.functional.cross_entropy(model(images.to(device)), targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if dist.get_rank() == 0:
        net = model.module if isinstance(model, DDP) else model
        net.eval()
        correct = total = 0
        with torch.no_grad():
            for images, targets in DataLoader(held_out, batch_size=256, num_workers=8):
                logits = net(images.to(device, non_blocking=True))
                correct += (logits.argmax(1).cpu() == targets).sum().item()
                total += targets.numel()
        print(f"final top-1 on the held-out split: {correct / total:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
