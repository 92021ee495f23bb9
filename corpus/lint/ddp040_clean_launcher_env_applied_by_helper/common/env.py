import os


def launcher_values():
    """The ranks torchrun exports, by option name."""
    found = {}
    if "LOCAL_RANK" in os.environ:
        found["local_rank"] = int(os.environ["LOCAL_RANK"])
    return found
