from .checkpoint_io import *  # noqa: F403
