"""pytest tests run under a distributed launch (the `distributed` marker and the gloo
fixture say so): each process builds the dataset, so the download runs on every rank."""

import pytest
from torchvision import datasets, transforms

from quantkit.session import Session


def _mnist():
    return datasets.MNIST("data", download=True, transform=transforms.ToTensor())  # expect-preview: DDP025


@pytest.mark.distributed
def test_distrib_gather(distributed_context_gloo):
    session = Session()
    images = _mnist()
    assert session.gather(images[0][0]).shape == (1, 28, 28)
