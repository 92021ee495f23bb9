"""Test accuracy counted on each rank's shard, packed into one tensor that is bound to a
name, summed over the ranks in place and read back: the printed accuracy is the whole
test set's."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def test(model, dataset, device):
    loader = DataLoader(dataset, batch_size=256, sampler=DistributedSampler(dataset, shuffle=False))  # expect-preview: DDP003
    model.eval()
    correct = total = 0
    for images, labels in loader:
        predictions = model(images.to(device)).argmax(dim=1)
        correct += (predictions == labels.to(device)).sum().item()
        total += labels.numel()
    counts = torch.tensor([correct, total], dtype=torch.float64, device=device)
    dist.all_reduce(counts)
    accuracy = (counts[0] / counts[1]).item()
    if dist.get_rank() == 0:
        print(f"test accuracy {accuracy:.4f}")
    return accuracy
