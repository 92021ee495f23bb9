"""A music-text retrieval trainer: the setup helper pins the rendezvous to this machine,
while the launcher counts processes over `--num-nodes` machines."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"  # expect: DDP062
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)


def main_worker(gpu, ngpus_per_node, args):
    rank = args.node_rank * ngpus_per_node + gpu
    ddp_setup(rank, args.world_size)
    torch.cuda.set_device(gpu)
    audio_tower = nn.Sequential(nn.Conv1d(1, 32, 9, stride=4), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten())
    text_tower = nn.EmbeddingBag(30000, 32)
    model = DDP(nn.ModuleDict({"audio": audio_tower, "text": text_tower}).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.steps):
        audio = model.module["audio"](torch.randn(16, 1, 16000, device=gpu))
        text = model.module["text"](torch.randint(0, 30000, (16, 24), device=gpu))
        logits = audio @ text.t()
        loss = nn.functional.cross_entropy(logits, torch.arange(16, device=gpu))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-nodes", type=int, default=1)
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--steps", type=int, default=10000)
    args = parser.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    args.world_size = ngpus_per_node * args.num_nodes
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))


if __name__ == "__main__":
    main()
