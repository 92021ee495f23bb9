"""unittest tests pytest runs in its one process: they build a `Session` and load weights
through the package, whose modules use the distributed process group when launched, but
nothing here is launched. GPU 0 and the download in `setUp` are right."""

import torch
import torch.nn as nn
from torchvision import datasets, transforms

from quantkit.loading import load_quantized
from quantkit.session import Session
from quantkit.testing import QuantTestCase


class QuantTestBase(QuantTestCase):
    def setUp(self):
        self.session = Session()
        self.images = datasets.MNIST("data", download=True, transform=transforms.ToTensor())
        self.model = load_quantized(nn.Linear(784, 10), "weights.pt")

    def check_on_gpu(self, model):
        batch = self.images[0][0].flatten().unsqueeze(0).half().to(0)
        return model.to(0)(batch)


class HalfPrecisionTest(QuantTestBase):
    def test_output_shape(self):
        self.assertEqual(self.check_on_gpu(self.model).shape, (1, 10))

    def test_gather_keeps_values(self):
        ones = torch.ones(3)
        self.assertTrue(torch.equal(self.session.gather(ones), ones))
