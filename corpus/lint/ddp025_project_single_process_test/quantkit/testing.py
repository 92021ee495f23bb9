"""A test case base class that frees GPU memory after each test."""

import unittest

import torch


class QuantTestCase(unittest.TestCase):
    def tearDown(self):
        torch.cuda.empty_cache()
