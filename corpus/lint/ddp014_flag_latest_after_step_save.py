"""A training loop that saves twice at each checkpoint step: a file named for the step
(a new file every time, nothing to lose) and then `latest.pt`, rebinding the same name.
Only the second write replaces the last good checkpoint in place."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, out_dir, save_every):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    for step, (inputs, targets) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(inputs.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % save_every == 0:
            target = os.path.join(out_dir, f"step_{step:07d}.pt")
            torch.save({"model": model.module.state_dict(), "step": step}, target)
            target = os.path.join(out_dir, "latest.pt")
            torch.save({"model": model.module.state_dict(), "step": step}, target)  # expect-preview: DDP014
    dist.destroy_process_group()
