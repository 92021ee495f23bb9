"""Checkpointer classes with one `save_checkpoint` method name each: nothing in this module
calls them, so whether every rank writes is for the callers' modules to say, each class's
method by the calls on objects of that class (the other classes' methods of the same name
do not make a method an entry point). This module joins the job itself, so it is checked
before the project is known: both saves are unproven (shown under `--preview`)."""
import os
from typing import Protocol

import torch
import torch.distributed as dist


class Checkpointer(Protocol):
    def save_checkpoint(self, state: dict, step: int) -> None: ...


class FullCheckpointer:
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def save_checkpoint(self, state: dict, step: int) -> None:
        path = os.path.join(self.out_dir, f"step_{step}", "model.pt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.save(state["model"], path)  # expect-preview: DDP013
        print(f"rank {dist.get_rank()}: saved {path}")


class AdapterCheckpointer:
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def save_checkpoint(self, state: dict, step: int) -> None:
        torch.save(state["adapter"], os.path.join(self.out_dir, f"adapter_{step}.pt"))  # expect-preview: DDP013
