"""ImageNet-example style checkpointing: a fixed file name, rewritten every epoch, and the
file a restart passes to `--resume`."""
import argparse
import os
import shutil

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)  # expect: DDP014
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")  # expect-preview: DDP014


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="", help="checkpoint to resume from")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DistributedDataParallel(nn.Linear(64, 10).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    best_acc, start_epoch = 0.0, 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.module.load_state_dict(checkpoint["state_dict"])
        best_acc, start_epoch = checkpoint["best_acc1"], checkpoint["epoch"]
    for epoch in range(start_epoch, 30):
        sampler.set_epoch(epoch)
        correct = torch.zeros(2, device=device)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += torch.stack([(logits.argmax(1) == y).sum(), torch.tensor(y.numel(), device=device)])
        dist.all_reduce(correct)
        acc = (correct[0] / correct[1]).item()
        is_best = acc > best_acc
        best_acc = max(acc, best_acc)
        if rank == 0:
            save_checkpoint(
                {"epoch": epoch + 1, "state_dict": model.module.state_dict(), "best_acc1": best_acc},
                is_best,
            )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
