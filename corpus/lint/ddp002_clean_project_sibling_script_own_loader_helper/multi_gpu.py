"""The DDP version of the tutorial's script, run with torchrun: its own loader helper,
called with `distributed=True`, and `set_epoch` at the top of every epoch."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def prepare_dataloader(dataset, batch_size, distributed):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=not distributed,
        sampler=DistributedSampler(dataset) if distributed else None,
    )


def main(epochs=20):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))
    loader = prepare_dataloader(data, 64, True)
    model = DDP(torch.nn.Linear(16, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(epoch, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
