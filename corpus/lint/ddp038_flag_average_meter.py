"""ImageNet-style validation: accuracy kept in a hand-written AverageMeter over a sharded
validation set, never all-reduced, and compared to choose the best checkpoint."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n
        self.avg = self.sum / self.count


def validate(val_loader, model, local_rank):
    top1 = AverageMeter("Acc@1")
    model.eval()
    with torch.no_grad():
        for images, target in val_loader:
            output = model(images.cuda(local_rank))
            acc = (output.argmax(1).cpu() == target).float().mean().item() * 100
            top1.update(acc, images.size(0))
    return top1.avg


def main(epochs=90):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4096, 64), torch.randint(0, 100, (4096,)))
    val_set = TensorDataset(torch.randn(1024, 64), torch.randint(0, 100, (1024,)))
    train_sampler = DistributedSampler(train_set, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)
    model = DDP(nn.Linear(64, 100).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    best_acc1 = 0.0
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for images, target in train_loader:
            loss = nn.functional.cross_entropy(model(images.cuda(local_rank)), target.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc1 = validate(val_loader, model, local_rank)
        is_best = acc1 > best_acc1  # expect: DDP038
        best_acc1 = max(acc1, best_acc1)
        if is_best and dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "model_best.tmp")
            os.replace("model_best.tmp", "model_best.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
