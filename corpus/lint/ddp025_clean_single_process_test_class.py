"""Tests of a model-loading helper. The unittest class runs in the one pytest process (no
process group, no rank asked): its downloads have no other rank to race with. The test
script's own entry point, launched under torchrun, joins the group, and its download runs
on every rank."""

import os
import unittest

import torch.distributed as dist
import torchvision


class LoaderTest(unittest.TestCase):
    @unittest.skipIf(os.environ.get("OFFLINE") == "1", "needs the network")
    def test_download_once(self):
        data = torchvision.datasets.CIFAR10("/tmp/cifar", train=True, download=True)
        self.assertEqual(len(data.classes), 10)

    @unittest.skipIf(os.environ.get("OFFLINE") == "1", "needs the network")
    def test_shape(self):
        data = torchvision.datasets.CIFAR10("/tmp/cifar", train=False, download=True)
        self.assertGreater(len(data), 0)


def main():
    dist.init_process_group("gloo")
    data = torchvision.datasets.CIFAR10("/tmp/cifar", train=True, download=True)  # expect: DDP025
    print(len(data))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
