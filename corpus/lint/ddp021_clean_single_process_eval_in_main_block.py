"""The pre-torchrun HF pattern: the logging block runs on rank 0 (or the lone process), and
inside it evaluation runs only when `local_rank == -1`, a run of one process with no DDP
wrapper to broadcast through. Evaluation after each epoch runs on every rank."""

import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 4)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x):
        return self.proj(x) * self.scale


def evaluate(args, model, batches):
    total = 0.0
    with torch.no_grad():
        for x in batches:
            total += model(x.to(args.device)).sum().item()
    return total


def train(args, model, loader, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    step = 0
    for _ in range(args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(args.device)), y.to(args.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if args.local_rank in [-1, 0] and step % args.logging_steps == 0:
                if args.local_rank == -1 and args.evaluate_during_training:
                    print(step, evaluate(args, model, batches))
        print(evaluate(args, model, batches))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)  # expect: DDP022
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--logging_steps", type=int, default=50)
    parser.add_argument("--evaluate_during_training", action="store_true")
    args = parser.parse_args()
    model = Scorer()
    if args.local_rank == -1:
        args.device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        dist.init_process_group("nccl")
    model = model.to(args.device)
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank])
    loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,)))] * 10
    train(args, model, loader, [torch.randn(8, 16)] * 4)


if __name__ == "__main__":
    main()
