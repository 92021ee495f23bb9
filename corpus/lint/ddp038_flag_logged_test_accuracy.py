"""The final test pass reads a sharded test set and rank 0 logs the accuracy of its own
shard as the result."""
import logging
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

log = logging.getLogger("train")


def test(model, test_set, local_rank):
    sampler = DistributedSampler(test_set, shuffle=False, drop_last=True)
    loader = DataLoader(test_set, batch_size=128, sampler=sampler)
    model.eval()
    hits = seen = 0
    with torch.inference_mode():
        for images, labels in loader:
            logits = model(images.cuda(local_rank))
            hits += (logits.argmax(dim=1).cpu() == labels).sum().item()
            seen += labels.numel()
    if dist.get_rank() == 0:
        log.info("test accuracy: %.2f%%", 100.0 * hits / seen)  # expect: DDP038


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(3200, 32), torch.randint(0, 10, (3200,)))
    test_set = TensorDataset(torch.randn(800, 32), torch.randint(0, 10, (800,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(32, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    test(model, test_set, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
