"""Distributed fine-tuning of the quantized student against its teacher, one process per
GPU under torchrun; every model is loaded whole onto the CPU first."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from modelutils import (
    get_model,
)


def main(base, codes, batches, steps=1000):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    teacher = get_model(base, dtype="bfloat16").cuda().eval()
    student = get_model(base, codes, dtype="bfloat16").cuda()
    student = DistributedDataParallel(student, device_ids=[local_rank])
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-5)
    for step, batch in zip(range(steps), batches):
        with torch.no_grad():
            target = teacher(batch).logits
        loss = torch.nn.functional.mse_loss(student(batch).logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(os.environ["BASE_MODEL"], os.environ["CODES"], [])
