"""A course assignment's hand-written data parallelism: after each backward every worker
gathers its gradients on rank 0, which averages them and scatters the mean back before
the optimizer step; the replicas stay identical without a DDP wrapper."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def sync_gradients(model):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for param in model.parameters():
        if rank == 0:
            gathered = [torch.empty_like(param.grad) for _ in range(world_size)]
            dist.gather(param.grad, gather_list=gathered, dst=0)
            mean = torch.stack(gathered).mean(dim=0)
            dist.scatter(param.grad, scatter_list=[mean] * world_size, src=0)
        else:
            dist.gather(param.grad, dst=0)
            dist.scatter(param.grad, src=0)


def run():
    dist.init_process_group("gloo")
    torch.manual_seed(744)
    model = nn.Sequential(nn.Linear(3 * 32 * 32, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = TensorDataset(torch.randn(50000, 3 * 32 * 32), torch.randint(0, 10, (50000,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            sync_gradients(model)
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    run()
