"""A stand-in for the three things `imagenet/main.py --dummy` takes from torchvision, used by
run.py only where torchvision cannot be imported (no build of it matches the torch installed):
``datasets.FakeData`` (random images, the same for an index in every process), ``models`` (one
small convolutional network with BatchNorm, registered as ``resnet18``) and
``transforms.ToTensor``. Written for this project; it is not torchvision's code."""

from . import datasets, models, transforms

__all__ = ["datasets", "models", "transforms"]
