"""Evaluation entry of a segmentation toolkit.

The file keeps a multi-GPU launcher (`launch_workers` spawns one worker per GPU, each
picking its GPU by the spawn index), but the script's entry runs only the one-GPU
segmentation evaluation, and pins it to GPU 0; the call that would start the workers
is commented out. No process ever picks a GPU per rank here.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def build_model():
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 19, 1))


def evaluate(model, device, batches=20):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for _ in range(batches):
            image = torch.randn(2, 3, 128, 128, device=device)
            target = torch.randint(0, 19, (2, 128, 128), device=device)
            pred = model(image).argmax(dim=1)
            correct += (pred == target).sum().item()
            total += target.numel()
    counts = torch.tensor([correct, total], dtype=torch.float64, device=device)
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(counts)
    return (counts[0] / counts[1]).item()


def worker(index, world_size, port):
    torch.cuda.set_device(index)
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{port}", rank=index, world_size=world_size
    )
    model = build_model().cuda(index)
    print(f"rank {index}: pixel accuracy {evaluate(model, torch.device('cuda', index)):.4f}")
    dist.destroy_process_group()


def launch_workers(world_size=8, port=29511):
    mp.spawn(worker, args=(world_size, port), nprocs=world_size)


def evaluate_segmentation():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    device = torch.device("cuda")
    model = build_model().to(device)
    print(f"pixel accuracy {evaluate(model, device, args.batches):.4f}")


if __name__ == "__main__":
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    # launch_workers()
    evaluate_segmentation()
