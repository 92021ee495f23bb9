"""Fine-tuning with a train/val phase loop over a dict of loaders, reshuffled each epoch."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms


def build_datasets(root):
    augment = transforms.Compose(
        [transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
    )
    plain = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
    train_set = datasets.ImageFolder(os.path.join(root, "train"), augment)
    val_set = datasets.ImageFolder(os.path.join(root, "val"), plain)
    return train_set, val_set


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set, val_set = build_datasets("/data/flowers")
    train_sampler = DistributedSampler(train_set)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler, num_workers=8)
    val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler, num_workers=8)
    dataloaders = {"train": train_loader, "val": val_loader}
    net = nn.SyncBatchNorm.convert_sync_batchnorm(models.resnet18(num_classes=102)).cuda()
    net = DDP(net, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(25):
        train_sampler.set_epoch(epoch)
        for phase in ("train", "val"):
            net.train(phase == "train")
            correct = torch.zeros(2, device="cuda")
            for images, labels in dataloaders[phase]:
                images, labels = images.cuda(), labels.cuda()
                with torch.set_grad_enabled(phase == "train"):
                    logits = net(images)
                    loss = criterion(logits, labels)
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                correct += torch.stack([(logits.argmax(1) == labels).sum(), torch.tensor(len(labels), device="cuda")])
            dist.all_reduce(correct)
            if dist.get_rank() == 0:
                print(f"epoch {epoch} {phase} acc {correct[0] / correct[1]:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
