from . import datasets, trainer, utils

__all__ = ["datasets", "trainer", "utils"]
