"""Fine-tuning that rebuilds its loaders every epoch through a generator helper (one
loader per data file, to save memory): every new DistributedSampler starts at epoch 0."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler


class JsonlDataset(torch.utils.data.Dataset):
    def __init__(self, path):
        with open(path) as handle:
            self.rows = [torch.tensor([float(x) for x in line.split()]) for line in handle]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return self.rows[index]


def get_loaders(files, args, evaluate=False):
    for path in files:
        dataset = JsonlDataset(path)
        if evaluate:
            sampler = SequentialSampler(dataset)
        else:
            sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, sampler=sampler, batch_size=args.batch_size, drop_last=True)
        yield dataset, sampler, loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-dir", required=True)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1).cuda())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    files = sorted(os.path.join(args.train_dir, f) for f in os.listdir(args.train_dir))
    for epoch in range(args.epochs):  # expect: DDP002
        for _, _, loader in get_loaders(files, args):
            for rows in loader:
                loss = model(rows[:, :8].cuda()).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


if __name__ == "__main__":
    main()
