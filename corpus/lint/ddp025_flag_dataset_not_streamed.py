"""The twin of ddp025_clean_streaming_dataset with streaming turned off: every rank
downloads the training split into the one Hugging Face cache at once."""

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
    train = load_dataset("allenai/c4", "en", split="train", streaming=False)  # expect: DDP025
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
