"""The twin of ddp014_clean_feature_dump_moved_to_cpu: what is moved to the CPU and saved
here is the trained model itself, written straight onto the one file a resumed job reads."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, loader, optimizer, epochs, out_dir):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    for _ in range(epochs):
        for inputs, targets in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.cpu(), os.path.join(out_dir, "last_model.pth"))  # expect-preview: DDP014
            model.module.cuda(local_rank)
    dist.destroy_process_group()
