"""A segmentation trainer whose resume was switched off by hand (`if False:` where a
checkpoint option used to be tested): nothing reads the best-model file back, so its
in-place rewrite loses no resume point (unproven, as for any file only rewritten)."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, evaluate, save_dir, epochs=50):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    if False:  # resume
        state = torch.load(os.path.join(save_dir, "checkpoint-best.pth"), map_location="cpu")
        model.module.load_state_dict(state["state_dict"])
    best_iou = 0.0
    for epoch in range(epochs):
        for images, masks in loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), masks.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        iou = evaluate(model.module)
        if dist.get_rank() == 0 and iou > best_iou:
            state = {"epoch": epoch, "state_dict": model.module.state_dict()}
            torch.save(state, os.path.join(save_dir, "checkpoint-best.pth"))  # expect-preview: DDP014
            best_iou = iou
