"""Hand crops for a pose model: the box detector falls back to the CPU when the GPU runs
out of memory, detects the same image again and goes on exactly where the GPU path would
have, so a rank that ran out of memory skips nothing the others do. The training step's
own out-of-memory retry is different: it runs the wrapped model again on half the batch,
and the other ranks' collectives no longer line up with its."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class BoxDetector:
    def __init__(self, detector, device):
        self.detector = detector
        self.device = device

    def __call__(self, image):
        try:
            boxes = self.detector(image, device=self.device)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            self.device = "cpu"
            boxes = self.detector(image, device="cpu")
        return boxes


def train(model, detector, loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    boxes_of = BoxDetector(detector, f"cuda:{local_rank}")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images, heatmaps in loader:
            crops = torch.stack([img[:, :128, :128] for img in images if boxes_of(img) is not None])
            try:
                loss = (model(crops.cuda()) - heatmaps.cuda()).pow(2).mean()
            except torch.cuda.OutOfMemoryError:  # expect: DDP012
                half = len(crops) // 2
                loss = (model(crops[:half].cuda()) - heatmaps[:half].cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
