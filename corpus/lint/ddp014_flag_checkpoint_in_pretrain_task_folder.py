"""A masked-language-model pre-training script: the task's folder is `pretrain_bert/`, and the
run's `.checkpoint` file (model, optimizer, step) is rewritten in place at every validation.
`--checkpoint_path` with `--resume_training` continues from it: a crash mid-write loses the
resume. The folder's name says what is trained, not that the file holds pretrained weights."""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

TASK = "pretrain_bert"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint_path", default=None)
    parser.add_argument("--resume_training", action="store_true")
    parser.add_argument("--steps", type=int, default=100000)
    config = parser.parse_args()
    run_id = time.strftime("%Y%m%d-%H%M%S")
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(nn.Linear(768, 32000).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    start = 0
    if config.checkpoint_path:
        checkpoint = torch.load(config.checkpoint_path, map_location="cpu")
        model.module.load_state_dict(checkpoint["model"])
        if config.resume_training:
            optimizer.load_state_dict(checkpoint["optimizer"])
            start = checkpoint["n_step"]
    tokens = torch.load("tokens.pt", map_location="cpu")
    for n_step in range(start, config.steps):
        batch = tokens[n_step % len(tokens)].cuda()
        loss = model(batch).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if n_step % 5000 == 0 and dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "n_step": n_step}
            torch.save(state, f"../models/{TASK}/{run_id}.checkpoint")  # expect: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
