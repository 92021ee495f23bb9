"""PGD adversarial training: the attack runs through `model.module` (no DDP hooks for the
input-gradient steps) and hands back detached examples; the training step goes through
the DDP wrapper."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms


def pgd(net, images, labels, eps=8 / 255, alpha=2 / 255, steps=7):
    adversarial = images + torch.empty_like(images).uniform_(-eps, eps)
    for _ in range(steps):
        adversarial.requires_grad_(True)
        loss = nn.functional.cross_entropy(net(adversarial), labels)
        (grad,) = torch.autograd.grad(loss, adversarial)
        adversarial = adversarial.detach() + alpha * grad.sign()
        adversarial = torch.min(torch.max(adversarial, images - eps), images + eps).clamp(0, 1)
    return adversarial.detach()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = datasets.CIFAR10("/data/cifar10", train=True, transform=transforms.ToTensor())
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=4, drop_last=True)
    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(models.resnet18(num_classes=10)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            model.eval()
            adversarial = pgd(model.module, images, labels)
            model.train()
            loss = nn.functional.cross_entropy(model(adversarial), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
