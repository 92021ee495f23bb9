from .cifar import TrainLoader

__all__ = ["TrainLoader"]
