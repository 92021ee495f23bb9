"""The trainer's DDP: the wrapper with a few conveniences of its own."""

from torch.nn.parallel import DistributedDataParallel


class ForwardingDDP(DistributedDataParallel):
    """DDP that forwards unknown attributes to the wrapped module."""

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)
