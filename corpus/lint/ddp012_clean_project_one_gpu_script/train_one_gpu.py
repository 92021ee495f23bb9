"""Training on one GPU, for laptops and quick runs; train_ddp.py is the distributed trainer.

An out-of-memory batch is skipped and the batch size halved: with one process there is no
other rank to wait for this one."""

import argparse

import torch
from torch.utils.data import DataLoader

from common import build_model, load_patches


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=3e-4)
    return parser.parse_args()


def make_loader(dataset, batch_size: int) -> DataLoader:
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4)


def main() -> None:
    args = parse_args()
    model = build_model().cuda()
    dataset = load_patches("train")
    batch_size = 128
    loader = make_loader(dataset, batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for images, labels in loader:
            try:
                loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                batch_size = max(1, batch_size // 2)
                print(f"out of memory: skipped a batch; next epoch's batch size {batch_size}")
                continue
        loader = make_loader(dataset, batch_size)
    torch.save(model.state_dict(), "classifier_one_gpu.pt")


if __name__ == "__main__":
    main()
