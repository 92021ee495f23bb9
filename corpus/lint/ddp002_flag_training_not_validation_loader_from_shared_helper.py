"""One helper builds both loaders on a DistributedSampler and sets its epoch once, when it
builds it. The training loop never moves the training sampler to the next epoch: every
epoch repeats one order. The validation loader, asked for with `train=False` and read every
few hundred steps inside the training loop, is never moved either, which is harmless: the
order in which the validation set is scored changes no score."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def create_dataloader(dataset, batch_size, train=True):
    sampler = DistributedSampler(dataset)
    sampler.set_epoch(0)
    return DataLoader(
        dataset,
        batch_size=batch_size if train else 1,
        sampler=sampler,
        drop_last=train,
        num_workers=2,
    )


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(8192, 2, 257), torch.randn(8192, 2, 257))
    valid_set = TensorDataset(torch.randn(256, 2, 257), torch.randn(256, 2, 257))
    train_loader = create_dataloader(train_set, 32, train=True)
    validation_loader = create_dataloader(valid_set, 32, train=False)
    model = DDP(nn.Sequential(nn.Linear(257, 512), nn.ReLU(), nn.Linear(512, 257)).to(device),
                device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    steps = 0
    for epoch in range(100):  # expect: DDP002
        for noisy, clean in train_loader:
            loss = nn.functional.l1_loss(model(noisy.to(device)), clean.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
            if steps % 500 == 0:
                model.eval()
                error = torch.zeros(1, device=device)
                with torch.no_grad():
                    for noisy_val, clean_val in validation_loader:
                        out = model(noisy_val.to(device))
                        error += nn.functional.l1_loss(out, clean_val.to(device))
                dist.all_reduce(error)
                if dist.get_rank() == 0:
                    print(f"step {steps}: validation L1 {error.item() / len(valid_set):.4f}")
                model.train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
