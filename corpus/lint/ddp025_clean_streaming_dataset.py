"""Pre-training on a web-scale corpus streamed from the Hugging Face Hub: with
`streaming=True` each rank reads the data files as it iterates over its own share, so there
is no download into the cache for rank 0 to do first. The non-streamed validation split is
downloaded (rank 0 first, then a barrier)."""

import os

import torch
import torch.distributed as dist
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, tokenize, steps):
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train = load_dataset("allenai/c4", "en", split="train", streaming=True)
    train = split_dataset_by_node(train, rank=rank, world_size=world_size)
    if rank == 0:
        load_dataset("allenai/c4", "en", split="validation")
    dist.barrier()
    valid = load_dataset("allenai/c4", "en", split="validation")
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    for step, example in enumerate(train):
        if step == steps:
            break
        model(tokenize(example["text"]).cuda()).mean().backward()
    return valid


if __name__ == "__main__":
    from my_models import build_model, build_tokenizer

    main(build_model(), build_tokenizer(), steps=10_000)
