from toolkit.distributed import setup_distributed

__all__ = ["setup_distributed"]
