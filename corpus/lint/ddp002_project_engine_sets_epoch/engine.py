"""Training/evaluation loops shared by the experiment scripts."""
import torch
import torch.distributed as dist
import torch.nn.functional as F


def train_one_epoch(model, data_loader, optimizer, device, epoch, print_freq=50):
    # Reshuffle differently every epoch (DistributedSampler seeds with seed + epoch).
    data_loader.sampler.set_epoch(epoch)
    model.train()
    for step, (images, targets) in enumerate(data_loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = F.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % print_freq == 0 and dist.get_rank() == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


@torch.no_grad()
def evaluate(model, data_loader, device):
    model.eval()
    stats = torch.zeros(2, device=device)
    for images, targets in data_loader:
        preds = model(images.to(device)).argmax(dim=1)
        stats[0] += (preds == targets.to(device)).sum()
        stats[1] += targets.numel()
    dist.all_reduce(stats)
    return (stats[0] / stats[1]).item()
