"""Tests of a dataset helper. `HubTestCase` is the project's own unittest base (it clears
a download cache after each test) and `TestSplits` a plain pytest class: their tests run
in the one pytest process, so their downloads race with no other rank. The tests on
`DistributedTestCase` run once per rank of a torchrun job, and every rank downloads."""

import os
import shutil
import tempfile
import unittest

import pytest
import torch.distributed as dist
import torchvision

CACHE = os.path.join(tempfile.gettempdir(), "mnist-cache")


class HubTestCase(unittest.TestCase):
    def tearDown(self):
        shutil.rmtree(CACHE, ignore_errors=True)


class DistributedTestCase(unittest.TestCase):
    """Joins the job torchrun started; each rank runs every test."""

    def setUp(self):
        dist.init_process_group("gloo")

    def tearDown(self):
        dist.destroy_process_group()


class DatasetTests(HubTestCase):
    @unittest.skipIf(os.environ.get("OFFLINE") == "1", "needs the network")
    def test_train_split_size(self):
        data = torchvision.datasets.MNIST(CACHE, train=True, download=True)
        self.assertEqual(len(data), 60000)


class TestSplits:
    @pytest.mark.network
    def test_test_split_size(self):
        data = torchvision.datasets.MNIST(CACHE, train=False, download=True)
        assert len(data) == 10000


class DatasetAcrossRanks(DistributedTestCase):
    @unittest.skipUnless(dist.is_available(), "needs torch.distributed")
    def test_every_rank_sees_the_classes(self):
        data = torchvision.datasets.MNIST(CACHE, train=True, download=True)  # expect: DDP025
        self.assertEqual(len(data.classes), 10)
