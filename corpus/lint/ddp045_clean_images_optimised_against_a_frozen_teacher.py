"""Each rank recovers synthetic images for its own share of the classes by optimising
random inputs against a frozen pretrained teacher: the optimizer holds the images only,
no model is trained, so no copies of one can drift apart."""
import os

import torch
import torch.distributed as dist
import torchvision
from torch.utils.data import DataLoader, DistributedSampler


class ClassIds(torch.utils.data.Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, index):
        return index


def recover(teacher, loader, device, steps):
    for class_ids in loader:
        targets = class_ids.to(device)
        images = torch.randn((len(targets), 3, 224, 224), device=device, requires_grad=True)
        optimizer = torch.optim.Adam([images], lr=0.25, betas=(0.5, 0.9))
        for _ in range(steps):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(teacher(images), targets)
            loss.backward()
            optimizer.step()
        for class_id, image in zip(class_ids.tolist(), images.detach().cpu()):
            torchvision.utils.save_image(image, f"recovered/{class_id:04d}.png")


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    teacher = torchvision.models.resnet18(weights="IMAGENET1K_V1").to(device).eval()
    for p in teacher.parameters():
        p.requires_grad = False
    dataset = ClassIds()
    loader = DataLoader(dataset, batch_size=50, sampler=DistributedSampler(dataset))
    recover(teacher, loader, device, steps=1000)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
