"""Evaluation with a progress bar bound to a name first (`bar = tqdm(loader)`): each rank
counts the correct predictions of its own shard and divides by the whole test set, so
with N processes every rank reports about 1/N of the true accuracy."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from tqdm import tqdm


def evaluate(model, test_set):
    sampler = DistributedSampler(test_set, shuffle=False)
    loader = DataLoader(test_set, batch_size=64, sampler=sampler, num_workers=4)
    correct = 0
    bar = tqdm(loader, disable=dist.get_rank() != 0)
    with torch.no_grad():
        for images, labels in bar:
            correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum().item()
    return correct / len(test_set)  # expect: DDP028


def main(model, test_set):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[local_rank])
    print(evaluate(model, test_set))
