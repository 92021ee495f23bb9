"""The sampler class is chosen by whether the job is distributed; the epoch loop never
tells the DistributedSampler which epoch it is."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset


def main(epochs=30):
    distributed = "LOCAL_RANK" in os.environ
    if distributed:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    sampler_class = DistributedSampler if distributed else RandomSampler
    loader = DataLoader(data, batch_size=32, sampler=sampler_class(data), drop_last=True)
    model = torch.nn.Linear(16, 1).cuda()
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):  # expect: DDP002
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
