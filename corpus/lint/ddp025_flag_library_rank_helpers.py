"""A test run on every rank through a training library: it asks the library for the world
size, so it is distributed code, and every rank downloads MNIST into one folder at once."""

from torchvision.datasets import MNIST

import trainlib.parallel as hub


def _check_sizes_on_every_rank(root):
    data = MNIST(root, train=True, download=True)  # expect: DDP025
    assert hub.all_reduce(len(data)) == len(data) * hub.get_world_size()


def test_sizes_on_gloo(distributed_context_gloo):
    _check_sizes_on_every_rank("/tmp/mnist")
