"""Saves that happen once per training run: the initial weights before the epoch loop of a
trainer that a hyper-parameter search calls many times, a snapshot at one configured step
(after an early return), and evaluation dumps in a folder named by the iteration."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

SNAPSHOT_STEP = int(os.environ.get("SNAPSHOT_STEP", "0"))


def snapshot(model, step, out_dir):
    if not out_dir or step != SNAPSHOT_STEP:
        return
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), os.path.join(out_dir, "snapshot.pt"))


def dump_eval(model, round_index, out_dir):
    if dist.get_rank() == 0:
        label = str(round_index)
        eval_dir = os.path.join(out_dir, "eval", label)
        os.makedirs(eval_dir, exist_ok=True)
        weights_file = os.path.join(eval_dir, "weights.pt")
        torch.save(model.module.state_dict(), weights_file)


def train_once(lr, out_dir, local_rank):
    model = DDP(nn.Linear(64, 8).cuda(local_rank), device_ids=[local_rank])
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), os.path.join(out_dir, "initial.pt"))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(2000):
        loss = model(torch.randn(32, 64, device=local_rank)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        snapshot(model, step, out_dir)
        if step % 500 == 0:
            dump_eval(model, step, out_dir)
    return loss.item()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank_on_node = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank_on_node)
    for trial_lr in (0.1, 0.03, 0.01):
        train_once(trial_lr, "search", rank_on_node)
    dist.destroy_process_group()
