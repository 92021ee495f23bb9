"""Each rank inverts its share of the classes by optimising a latent code together with
the generator that decodes it: the optimizer holds the generator's weights too, and
nothing wraps the generator, so each rank's copy drifts apart."""
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


def invert(generator, loader, device, steps):
    for class_ids in loader:
        targets = class_ids.to(device)
        images = torch.randn((len(targets), 3, 224, 224), device=device, requires_grad=True)
        optimizer = torch.optim.Adam([images, *generator.parameters()], lr=0.25, betas=(0.5, 0.9))
        for _ in range(steps):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(generator(images), targets)
            loss.backward()  # expect: DDP045
            optimizer.step()
        for class_id, image in zip(class_ids.tolist(), images.detach().cpu()):
            torchvision.utils.save_image(image, f"recovered/{class_id:04d}.png")


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    generator = torchvision.models.resnet18(weights="IMAGENET1K_V1").to(device)
    dataset = ClassIds()
    loader = DataLoader(dataset, batch_size=50, sampler=DistributedSampler(dataset))
    invert(generator, loader, device, steps=1000)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
