"""Reads this process's ranks from the launcher's environment."""
import os


def node_and_job_ranks():
    """(rank on this machine, rank in the whole job)."""
    local_rank = int(os.environ["LOCAL_RANK"])
    distributed_rank = int(os.environ["RANK"])
    return local_rank, distributed_rank
