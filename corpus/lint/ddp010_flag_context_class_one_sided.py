"""A context manager class whose entry makes the ranks above 0 wait, with no barrier on
exit to release them: rank 0 never issues the matching barrier."""

import os

import torch
import torch.distributed as dist


class MainRankFirst:
    def __init__(self):
        self.rank = int(os.environ.get("RANK", 0))

    def __enter__(self):
        if self.rank != 0:
            dist.barrier()  # expect: DDP010
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.rank == 0:
            print("main rank done")
        return False


def main():
    dist.init_process_group("gloo")
    with MainRankFirst():
        data = torch.randn(64, 4)
    dist.all_reduce(data)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
