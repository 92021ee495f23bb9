"""Validation sums a few metrics on this rank's shard and all-reduces each of them in a
loop over the list of tensors: every one is combined across ranks before rank 0 logs it
and compares it with the best so far."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def validate(model, dataset, device, best):
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset, shuffle=False))  # expect-preview: DDP003
    model.eval()
    loss_sum = torch.zeros(1, device=device)
    correct = torch.zeros(1, device=device)
    seen = torch.zeros(1, device=device)
    with torch.no_grad():
        for tokens, labels in loader:
            tokens, labels = tokens.to(device), labels.to(device)
            logits = model(tokens)
            loss_sum += torch.nn.functional.cross_entropy(logits, labels, reduction="sum")
            correct += (logits.argmax(-1) == labels).sum()
            seen += labels.numel()
    for metric in (loss_sum, correct, seen):
        dist.all_reduce(metric)
    val_loss = (loss_sum / seen).item()
    accuracy = (correct / seen).item()
    if dist.get_rank() == 0:
        print(f"val loss {val_loss:.4f} accuracy {accuracy:.3f}")
        if val_loss < best:
            torch.save(model.module.state_dict(), "best.pt")  # expect-preview: DDP014
    return min(val_loss, best)
