"""An old Hugging Face-style fine-tuning loop saves where `args.local_rank in [-1, 0]`,
and offers `--node_rank` for multi-node runs: each node's local rank 0 writes the same
`optimizer.pt` and `scheduler.pt`."""
import argparse
import os

import torch
import torch.distributed as dist


def train(model, optimizer, scheduler, batches):
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)  # expect: DDP022
    parser.add_argument("--node_rank", type=int, default=0)
    parser.add_argument("--save_steps", type=int, default=500)
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    if args.local_rank != -1:
        dist.init_process_group("nccl")
        torch.cuda.set_device(args.local_rank)
    for step, batch in enumerate(batches):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        if args.local_rank in [-1, 0] and step % args.save_steps == 0:
            folder = os.path.join(args.output_dir, f"checkpoint-{step}")
            torch.save(optimizer.state_dict(), os.path.join(folder, "optimizer.pt"))  # expect: DDP059
            torch.save(scheduler.state_dict(), os.path.join(folder, "scheduler.pt"))  # expect: DDP059
