"""Preference fine-tuning loop: `torchrun --nproc_per_node=8 train_dpo.py`. The step runs
in the lab's trainer package; an OOM in it is logged and the micro-batch dropped."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from labtrain import PreferenceTrainer, build_policy, preference_batches


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    policy = DDP(build_policy().cuda(), device_ids=[local_rank])
    trainer = PreferenceTrainer(policy, lr=5e-7)
    for step, batch in enumerate(preference_batches(rank=dist.get_rank())):
        try:
            loss = trainer.train_step(batch)
        except torch.cuda.OutOfMemoryError:  # expect: DDP012
            print(f"rank {dist.get_rank()}: OOM at step {step}, dropping the batch")
            torch.cuda.empty_cache()
            continue
        if step % 100 == 0 and dist.get_rank() == 0:
            print(step, loss)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
