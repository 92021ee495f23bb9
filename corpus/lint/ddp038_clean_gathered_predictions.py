"""Predictions of every rank are gathered before the score is computed; a training-loss
average of rank 0 is logged as such (a training loop is not an evaluation)."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def predict(model, loader, device):
    model.eval()
    preds, labels = [], []
    for x, y in loader:
        preds.append(model(x.to(device)).argmax(1))
        labels.append(y.to(device))
    preds, labels = torch.cat(preds), torch.cat(labels)
    every_pred = [torch.empty_like(preds) for _ in range(dist.get_world_size())]
    every_label = [torch.empty_like(labels) for _ in range(dist.get_world_size())]
    dist.all_gather(every_pred, preds)
    dist.all_gather(every_label, labels)
    return torch.cat(every_pred), torch.cat(every_label)


def main(epochs=5):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(2560, 8), torch.randint(0, 2, (2560,)))
    test_set = TensorDataset(torch.randn(640, 8), torch.randint(0, 2, (640,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=32, sampler=DistributedSampler(test_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(8, 2).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        running = 0.0
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: rank-0 train loss {running / len(train_loader):.4f}")
    preds, labels = predict(model, test_loader, device)
    if dist.get_rank() == 0:
        print(f"test accuracy {(preds == labels).float().mean().item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
