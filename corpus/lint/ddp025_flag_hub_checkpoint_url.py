"""Fine-tuning from a checkpoint URL that every rank fetches through torch.hub (reported
as info: torch.hub downloads to a temporary file and renames it, so this costs N
downloads on the first run, not a corrupt cache)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def load_pretrained(model, url):
    if url.startswith("https"):
        checkpoint = torch.hub.load_state_dict_from_url(url, map_location="cpu", check_hash=True)  # expect: DDP025
    else:
        checkpoint = torch.load(url, map_location="cpu")
    model.load_state_dict(checkpoint["model"], strict=False)


def main(finetune="https://example.org/weights/base.pth", epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))
    load_pretrained(net, finetune)
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
