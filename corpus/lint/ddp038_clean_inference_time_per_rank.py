"""Caption evaluation on a sharded test set, written to per-rank files and merged on rank 0.

Each rank also logs how long its model spent per batch: a sum of clock readings
(`time.time() - tic`) over its own shard, divided by its own batch count. That is a
timing of this process's work, right as it is; the captions themselves are gathered
before any score is computed.
"""
import json
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

logger = logging.getLogger(__name__)


class Captioner(nn.Module):
    def __init__(self, vocab=1000, width=256):
        super().__init__()
        self.encode = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, width))
        self.head = nn.Linear(width, vocab)

    def forward(self, images):
        return self.head(self.encode(images))


def evaluate(model, test, out_dir, rank):
    loader = DataLoader(test, batch_size=50, sampler=DistributedSampler(test, shuffle=False))
    model.eval()
    time_meter = 0.0
    step = 0
    rows = []
    with torch.no_grad():
        for step, (images, keys) in enumerate(loader):
            tic = time.time()
            logits = model(images.cuda())
            time_meter += time.time() - tic
            for key, tokens in zip(keys.tolist(), logits.argmax(-1).tolist()):
                rows.append({"key": key, "caption": tokens})
    logger.info(f"inference {time_meter / (step + 1):.4f} s per batch")
    with open(os.path.join(out_dir, f"pred_{rank}.json"), "w") as handle:
        json.dump(rows, handle)


def merge(out_dir, world_size):
    merged = {}
    for r in range(world_size):
        with open(os.path.join(out_dir, f"pred_{r}.json")) as handle:
            merged.update({row["key"]: row["caption"] for row in json.load(handle)})
    logger.info(f"{len(merged)} captions")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(Captioner().cuda(), device_ids=[local_rank])
    test = TensorDataset(torch.rand(1000, 3, 32, 32), torch.arange(1000))
    os.makedirs("preds", exist_ok=True)
    evaluate(model, test, "preds", dist.get_rank())
    dist.barrier()
    if dist.get_rank() == 0:
        merge("preds", dist.get_world_size())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
