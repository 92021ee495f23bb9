"""CIFAR loaders: random crops and flips for training, sharded with a DistributedSampler."""
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def train_loader(root, batch_size, workers=4):
    augment = transforms.Compose(
        [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
    )
    train_set = datasets.CIFAR10(root, train=True, transform=augment)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    return DataLoader(train_set, batch_size=batch_size, sampler=sampler, num_workers=workers)
