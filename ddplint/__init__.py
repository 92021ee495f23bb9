"""ddplint: a static linter for PyTorch DistributedDataParallel training scripts."""

__version__ = "0.1.0"
