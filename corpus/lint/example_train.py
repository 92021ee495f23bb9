"""A small DDP training script with the mistakes people make in their first week.

`ddplint check corpus/lint/example_train.py` is the README's quickstart; every marked line
below is a real problem, explained by `ddplint rule CODE`.
"""

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    world_size = dist.get_world_size()

    model = build_model().to("cuda:0")  # expect: DDP001
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    dataset = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, shuffle=True)  # expect: DDP008
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):  # expect: DDP002
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = criterion(model(x), y)
            if torch.isnan(loss):
                continue  # expect: DDP011
            loss = loss / world_size  # expect: DDP005
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            tmp = f"checkpoint.pt.tmp{epoch}"
            torch.save({"model": model.state_dict(), "epoch": epoch}, tmp)  # expect: DDP006
            os.replace(tmp, "checkpoint.pt")
            dist.barrier()  # expect: DDP010

    dist.destroy_process_group()



def load_for_eval(path: str) -> nn.Module:
    """The trained model on one GPU or the CPU, from a checkpoint `main` wrote."""
    model = build_model()
    model.load_state_dict(torch.load(path, map_location="cpu")["model"])
    return model.eval()


if __name__ == "__main__":
    main()
