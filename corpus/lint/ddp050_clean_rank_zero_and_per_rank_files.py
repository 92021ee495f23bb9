"""A torchrun fine-tune whose files are written the careful way: the results and the config
on rank 0 only (a guard here, and a helper only called under the guard), per-rank
prediction files named by the rank, an append-mode log, a file lock around the shared
cache, and a scratch file from `tempfile`."""

import argparse
import json
import os
import tempfile

import numpy as np
import torch
import torch.distributed as dist
from filelock import FileLock
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def is_main_process():
    return dist.get_rank() == 0


def dump_config(args):
    with open(os.path.join(args.output_dir, "config.json"), "w") as f:
        json.dump(vars(args), f, indent=2)


def build_features(cache_dir):
    with FileLock(os.path.join(cache_dir, "features.lock")):
        path = os.path.join(cache_dir, "features.npy")
        if not os.path.exists(path):
            np.save(path, np.random.randn(512, 32).astype("float32"))
        return np.load(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="outputs")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    os.makedirs(args.output_dir, exist_ok=True)
    if is_main_process():
        dump_config(args)
    features = torch.from_numpy(build_features(args.output_dir))

    model = DDP(torch.nn.Linear(32, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_set = TensorDataset(features, torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with open(os.path.join(args.output_dir, "train.log"), "a") as f:
            f.write(f"rank {rank} epoch {epoch} done\n")
        with open(os.path.join(args.output_dir, f"preds_rank{rank}.txt"), "w") as f:
            f.write(str(loss.item()))
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
            json.dump({"epoch": epoch}, tmp)
        if rank == 0:
            with open(os.path.join(args.output_dir, "last_epoch.txt"), "w") as f:
                f.write(str(epoch))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
