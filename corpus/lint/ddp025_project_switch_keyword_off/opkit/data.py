"""Dataset helper that downloads its files in place when asked."""
import torch
from torchvision.datasets import MNIST


def load_digits(root, batch_size):
    train = MNIST(root, train=True, download=True)
    return torch.utils.data.DataLoader(train, batch_size=batch_size)
