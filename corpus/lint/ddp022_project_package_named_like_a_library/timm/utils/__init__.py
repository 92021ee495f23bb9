from .distributed import init_distributed_device

__all__ = ["init_distributed_device"]
