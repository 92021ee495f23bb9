"""An ECG encoder validated on every rank: the validation loader drops each rank's last
partial batch, which is where the sampler's padding falls, so the gathered scores hold the
repeated recordings only when a rank's share fills its batches exactly."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def validate(model, loader, device):
    model.eval()
    scores = []
    with torch.no_grad():
        for signals, labels in loader:
            logits = model(signals.to(device))
            scores.append((logits.argmax(1) == labels.to(device)).float())
    local = torch.cat(scores)
    gathered = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    return torch.cat(gathered).mean().item()


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(4000, 12, 500), torch.randint(0, 5, (4000,)))
    val_set = TensorDataset(torch.randn(803, 12, 500), torch.randint(0, 5, (803,)))
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(
        val_set,
        batch_size=64,
        drop_last=True,
        shuffle=False,
        sampler=DistributedSampler(val_set, shuffle=False),  # expect-preview: DDP003
    )
    net = nn.Sequential(nn.Conv1d(12, 32, 7), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 5))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(40):
        train_sampler.set_epoch(epoch)
        model.train()
        for signals, labels in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(signals.to(device)), labels.to(device)).backward()
            optimizer.step()
        accuracy = validate(model, val_loader, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: validation accuracy {accuracy:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
