"""The same sampling worker, spawned `--num_gpus` times: the entry only checks that the
count is positive, so every spawned rank fetches the same hub model at once."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from transformers import AutoModel, AutoTokenizer


def sample(rank, args, port):
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(args.num_gpus)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")  # expect: DDP025
    encoder = AutoModel.from_pretrained("bert-base-uncased").cuda().eval()  # expect: DDP025
    prompts = args.prompts[rank :: args.num_gpus]
    with torch.no_grad():
        tokens = tokenizer(prompts, return_tensors="pt", padding=True).to("cuda")
        features = encoder(**tokens).last_hidden_state
    torch.save(features.cpu(), f"{args.out}.{rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_gpus", type=int, default=2)
    parser.add_argument("--prompts", nargs="+", default=["a photo of a cat", "a dog"])
    parser.add_argument("--out", default="features.pt")
    args = parser.parse_args()
    assert args.num_gpus >= 1, "need at least one GPU"
    mp.spawn(sample, args=(args, 29513), nprocs=args.num_gpus)
