"""The launcher's view of this process: the GPU index on its node."""

import os


def get_local_rank():
    return int(os.environ.get("LOCAL_RANK", "0"))
