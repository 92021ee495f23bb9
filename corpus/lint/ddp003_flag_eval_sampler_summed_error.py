"""Train sampler drops its tail; the evaluation sampler pads 501 test samples up to a
multiple of the world size, and the summed error and count, all-reduced, include the
repeated samples: the test MSE is not the one-process figure."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def evaluate(model, loader, local_rank):
    model.eval()
    total = torch.zeros(2, device=f"cuda:{local_rank}")
    for x, y in loader:
        err = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank), reduction="sum")
        total += torch.stack([err, torch.tensor(float(len(y)), device=err.device)])
    dist.all_reduce(total)
    model.train()
    return (total[0] / total[1]).item()


def main(epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(5001, 8), torch.randn(5001, 1))
    test_set = TensorDataset(torch.randn(501, 8), torch.randn(501, 1))
    train_sampler = DistributedSampler(train_set, drop_last=True)
    test_sampler = DistributedSampler(test_set, shuffle=False)  # expect-preview: DDP003
    train_loader = DataLoader(train_set, batch_size=100, sampler=train_sampler)
    test_loader = DataLoader(test_set, batch_size=100, sampler=test_sampler)
    model = DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        mse = evaluate(model, test_loader, local_rank)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} test mse {mse:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
