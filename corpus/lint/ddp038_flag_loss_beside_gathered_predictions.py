"""Sentiment classifier: predictions are gathered from every rank for the F1 score, but
the validation loss that picks the best model is summed on this rank's shard only."""

import os

import torch
import torch.distributed as dist
from sklearn.metrics import f1_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def gather_all(tensor):
    parts = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor)
    return torch.cat(parts)


def evaluate(model, loader, criterion):
    model.eval()
    total_loss = 0.0
    predictions, targets = [], []
    with torch.no_grad():
        for inputs, labels in loader:
            logits = model(inputs.cuda())
            total_loss += criterion(logits, labels.cuda()).item()
            predicted = gather_all(logits.argmax(dim=1))
            predictions.extend(predicted.cpu().tolist())
            targets.extend(gather_all(labels.cuda()).cpu().tolist())
    return total_loss / len(loader), f1_score(targets, predictions, average="macro")


def main(net, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
    val_sampler = DistributedSampler(val_set, shuffle=False)  # expect: DDP003
    val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)
    best = float("inf")
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for inputs, labels in train_loader:
            loss = criterion(model(inputs.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss, val_f1 = evaluate(model, val_loader, criterion)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val loss {val_loss:.4f}, F1 {val_f1:.4f}")  # expect: DDP038
            if val_loss < best:  # expect: DDP038
                best = val_loss
                torch.save(model.module.state_dict(), "best.pt")  # expect-preview: DDP014
