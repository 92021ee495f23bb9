"""Decorators of the project: `leader_only` calls the function on rank 0 alone (read from
its body, whatever its name); `timed` calls it on every rank."""
import functools
import time

import torch.distributed as dist


def job_rank():
    return dist.get_rank() if dist.is_initialized() else 0


def leader_only(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if job_rank() == 0:
            return func(*args, **kwargs)
        return None

    return wrapper


def timed(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        result = func(*args, **kwargs)
        print(f"{func.__name__} took {time.perf_counter() - start:.2f}s")
        return result

    return wrapper
