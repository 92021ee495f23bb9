"""Adversarial-training trainer whose loaders come from one of its own methods and whose
epoch method iterates a progress bar over `self.train_loader`."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms
from tqdm import tqdm


class AdversarialTrainer:
    def __init__(self, root, epochs, eps=4 / 255):
        self.gpu = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.gpu)
        dist.init_process_group("nccl")
        self.epochs = epochs
        self.eps = eps
        self.train_loader, self.val_loader = self.build_loaders(root)
        net = nn.SyncBatchNorm.convert_sync_batchnorm(models.resnet50(num_classes=1000))
        self.model = DDP(net.cuda(self.gpu), device_ids=[self.gpu])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.2, momentum=0.9)

    def build_loaders(self, root):
        train_set = datasets.ImageFolder(os.path.join(root, "train"), transforms.ToTensor())
        val_set = datasets.ImageFolder(os.path.join(root, "val"), transforms.ToTensor())
        train_loader = DataLoader(
            train_set, batch_size=128, sampler=DistributedSampler(train_set, shuffle=True), num_workers=10
        )
        val_loader = DataLoader(
            val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False), num_workers=10
        )
        return train_loader, val_loader

    def perturb(self, images, targets):
        delta = torch.zeros_like(images, requires_grad=True)
        loss = nn.functional.cross_entropy(self.model.module(images + delta), targets)
        (grad,) = torch.autograd.grad(loss, delta)
        return (images + self.eps * grad.sign()).clamp(0, 1).detach()

    def train_epoch(self):
        self.model.train()
        progress = tqdm(self.train_loader, disable=self.gpu != 0)
        for images, targets in progress:
            images, targets = images.cuda(self.gpu), targets.cuda(self.gpu)
            adversarial = self.perturb(images, targets)
            loss = nn.functional.cross_entropy(self.model(adversarial), targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def fit(self):
        for epoch in range(self.epochs):  # expect: DDP002
            self.train_epoch()


if __name__ == "__main__":
    AdversarialTrainer("/data/imagenet", epochs=90).fit()
