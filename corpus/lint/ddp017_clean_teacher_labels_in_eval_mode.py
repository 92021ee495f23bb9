"""Soft-label generation: every rank runs a pretrained teacher over its shard of the
images and stores the logits. Nothing trains here and the teacher is in eval mode, so
BatchNorm normalises with its running statistics, the same on every rank."""
import os

import torch
import torch.distributed as dist
import torchvision.models as models
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def label(loader, model, out_dir):
    model.eval()
    with torch.no_grad():
        for index, (images, _) in enumerate(loader):
            logits = model(images.cuda(non_blocking=True))
            torch.save(logits.cpu(), os.path.join(out_dir, f"labels_r{dist.get_rank()}_{index}.pt"))


def main_worker(arch, image_dir, out_dir):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = models.__dict__[arch](pretrained=True)
    model.cuda(local_rank)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    dataset = datasets.ImageFolder(image_dir, transform=transforms.ToTensor())
    loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=False))
    label(loader, model, out_dir)


if __name__ == "__main__":
    main_worker("resnet50", "data/train", "soft_labels")
