"""Resumable checkpoint: model, optimizer, scaler and epoch in one dict."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

CKPT = "checkpoints/last.pt"


def main(epochs=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8)).cuda(local_rank)
    net = DistributedDataParallel(net, device_ids=[local_rank])
    opt = torch.optim.AdamW(net.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    data = TensorDataset(torch.randn(1024, 32), torch.randint(0, 8, (1024,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(net(x.cuda(local_rank)), y.cuda(local_rank))
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        checkpoint = {
            "model": net.state_dict(),
            "optimizer": opt.state_dict(),
            "scaler": scaler.state_dict(),
            "epoch": epoch,
        }
        if dist.get_rank() == 0:
            os.makedirs(os.path.dirname(CKPT), exist_ok=True)
            torch.save(checkpoint, CKPT + ".tmp")  # expect: DDP006
            os.replace(CKPT + ".tmp", CKPT)
        dist.barrier()
    dist.destroy_process_group()



def export_weights(out="checkpoints/weights.pt"):
    """Weights alone for the serving image, through the bare network."""
    net = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8))
    net.load_state_dict(torch.load(CKPT, map_location="cpu")["model"])
    torch.save(net.state_dict(), out)


if __name__ == "__main__":
    main()
