"""Point-cloud classifier whose test loop all-reduces each batch's loss and intersection
counts in place before it accumulates them: the logged numbers cover every rank."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def test_epoch(loader, model, epoch, num_classes):
    model.eval()
    test_loss, count = 0.0, 0
    hits = torch.zeros(num_classes, device="cuda")
    seen = torch.zeros(num_classes, device="cuda")
    for points, label in loader:
        points, label = points.cuda(non_blocking=True), label.cuda(non_blocking=True)
        logits = model(points)
        batch = torch.tensor([points.size(0)], device="cuda")
        loss = nn.functional.cross_entropy(logits, label) * points.size(0)
        dist.all_reduce(loss), dist.all_reduce(batch)
        loss = loss / batch
        test_loss += loss.item() * points.size(0)
        count += points.size(0)
        correct = torch.bincount(label[logits.argmax(1) == label], minlength=num_classes).float()
        total = torch.bincount(label, minlength=num_classes).float()
        dist.all_reduce(correct), dist.all_reduce(total)
        hits += correct
        seen += total
    accuracy = (hits.sum() / seen.sum()).item()
    if dist.get_rank() == 0:
        print(f"test {epoch}: loss {test_loss / count:.4f} acc {accuracy:.4f}")
    return accuracy


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    clouds = TensorDataset(torch.randn(2048, 3 * 1024), torch.randint(0, 40, (2048,)))
    loader = DataLoader(clouds, batch_size=32, sampler=DistributedSampler(clouds, shuffle=False))  # expect-preview: DDP003
    model = DDP(nn.Linear(3 * 1024, 40).cuda(), device_ids=[local_rank])
    test_epoch(loader, model, 0, 40)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
