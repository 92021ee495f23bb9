"""Rank 0 downloads first through a training library's own helpers: `hub.get_rank()` asks
the rank and `hub.barrier()` is the library's barrier (it dispatches to torch.distributed
at run time). The others wait before their download call and find the files there."""

from torchvision import datasets, transforms

import trainlib.parallel as hub


def datasets_for(path):
    if hub.get_rank() > 0:
        hub.barrier()
    train = datasets.SVHN(path, split="train", download=True, transform=transforms.ToTensor())
    test = datasets.SVHN(path, split="test", download=False, transform=transforms.ToTensor())
    if hub.get_rank() == 0:
        hub.barrier()
    return train, test


def main(path="data"):
    train, test = datasets_for(path)
    return len(train), len(test)


if __name__ == "__main__":
    main()
