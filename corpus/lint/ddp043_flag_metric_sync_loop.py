"""An evaluation pass that all-reduces every chunk's partial sums: the number of chunks is
trimmed for a quick look on the main process only, so the other ranks issue all-reduces
rank 0 never joins."""

import os

import torch
import torch.distributed as dist


def evaluate(model, chunks, quick):
    rank = dist.get_rank()
    n_chunks = len(chunks)
    if quick and rank == 0:
        n_chunks = 2
    total = torch.zeros(2, device="cuda")
    for i in range(n_chunks):  # expect: DDP043
        x, y = chunks[i]
        partial = torch.stack(
            [
                (model(x).argmax(1) == y).sum().float(),
                torch.tensor(len(y.tolist()), device="cuda", dtype=torch.float),
            ]
        )
        dist.all_reduce(partial)
        total += partial
    return (total[0] / total[1]).item()


def main():
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(10, 3).cuda()
    chunks = [
        (torch.randn(16, 10, device="cuda"), torch.randint(0, 3, (16,), device="cuda"))
        for _ in range(8)
    ]
    print(evaluate(model, chunks, quick=True))


if __name__ == "__main__":
    main()
