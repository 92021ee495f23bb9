import os


def launcher_local_rank(fallback):
    """The local rank torchrun exports, else the value given."""
    return int(os.environ.get("LOCAL_RANK", fallback))
