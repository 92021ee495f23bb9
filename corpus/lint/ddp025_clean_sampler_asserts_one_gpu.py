"""A sampling script whose worker sizes the job by `--num_gpus` (it sets `WORLD_SIZE` from
it), but whose entry asserts `args.num_gpus == 1` before calling the worker once: one
process, so its hub downloads have no other rank to contend with."""

import argparse
import os

import torch
import torch.distributed as dist
from transformers import AutoModel, AutoTokenizer


def sample(args, rank, port):
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(args.num_gpus)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
    encoder = AutoModel.from_pretrained("bert-base-uncased").cuda().eval()
    with torch.no_grad():
        tokens = tokenizer(args.prompts, return_tensors="pt", padding=True).to("cuda")
        features = encoder(**tokens).last_hidden_state
    torch.save(features.cpu(), args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_gpus", type=int, default=1)
    parser.add_argument("--prompts", nargs="+", default=["a photo of a cat"])
    parser.add_argument("--out", default="features.pt")
    args = parser.parse_args()
    assert args.num_gpus == 1, "multi-GPU sampling is not supported"
    sample(args, 0, 29512)
