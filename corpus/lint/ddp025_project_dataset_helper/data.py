"""Dataset builders (no distributed code here): CIFAR is fetched on first use."""
from torchvision import datasets, transforms


def build_dataset(is_train, data_path, name="CIFAR"):
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    if name == "CIFAR":
        return datasets.CIFAR100(data_path, train=is_train, transform=transform, download=True)
    return datasets.ImageFolder(f"{data_path}/{'train' if is_train else 'val'}", transform=transform)
