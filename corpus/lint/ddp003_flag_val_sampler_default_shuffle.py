"""Fine-tuning with distributed evaluation: the validation sampler keeps the default
shuffle (to spread classes across ranks) and pads 1003 samples; the all-reduced hit count
includes the repeated ones, so the accuracy is not the one-process figure."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def validate(model, data_loader, local_rank):
    model.eval()
    hits = torch.zeros(2, device=torch.device("cuda", local_rank))
    for x, y in data_loader:
        pred = model(x.cuda(local_rank)).argmax(1)
        hits += torch.stack([(pred == y.cuda(local_rank)).sum(), torch.tensor(len(y), device=hits.device)])
    dist.all_reduce(hits)
    model.train()
    return (hits[0] / hits[1]).item()


def main(epochs=20, dist_eval=True):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset_train = TensorDataset(torch.randn(10000, 48), torch.randint(0, 10, (10000,)))
    dataset_val = TensorDataset(torch.randn(1003, 48), torch.randint(0, 10, (1003,)))
    sampler_train = DistributedSampler(dataset_train, shuffle=True, drop_last=True)
    sampler_val = DistributedSampler(dataset_val)  # expect-preview: DDP003
    data_loader_train = DataLoader(dataset_train, batch_size=128, sampler=sampler_train, num_workers=4)
    data_loader_val = DataLoader(dataset_val, batch_size=256, sampler=sampler_val, num_workers=4)
    model = DDP(nn.Linear(48, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.05)
    for epoch in range(epochs):
        sampler_train.set_epoch(epoch)
        for x, y in data_loader_train:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = validate(model.module, data_loader_val, local_rank)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val acc {accuracy:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
