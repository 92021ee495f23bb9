"""Training-loop handlers written for one process or many: `get_rank()` answers 0 when no
process group exists, so constructing a handler asks the rank without needing a job."""

import os

import torch
import torch.distributed as dist


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


class Checkpoint:
    def __init__(self, folder, save_on_rank=0):
        self.folder = folder
        self.save_on_rank = save_on_rank
        if get_rank() == save_on_rank:
            os.makedirs(folder, exist_ok=True)

    def __call__(self, step):
        if get_rank() == self.save_on_rank:
            torch.save({"step": step}, os.path.join(self.folder, f"state_{step}.pt"))


class Loop:
    def __init__(self, step_fn):
        self.step_fn = step_fn
        self.handlers = []

    def add_handler(self, handler):
        self.handlers.append(handler)

    def run(self, batches, steps):
        for step, batch in zip(range(steps), batches):
            self.step_fn(batch)
            for handler in self.handlers:
                handler(step)


class Job:
    def __init__(self, backend="nccl"):
        dist.init_process_group(backend)
        self.rank = dist.get_rank()
