"""A fine-tuning script in the style of the HF examples: it runs as one process
(`--local_rank -1`) or under the launcher. The evaluation during training runs only in
the one-process case, where the evaluation loader is a plain sequential one: the loss
compared to pick the best checkpoint is the whole set's."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler, TensorDataset


def evaluate(args, model, dataset):
    sampler = SequentialSampler(dataset) if args.local_rank == -1 else DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    model.eval()
    eval_loss, steps = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x.to(args.device))
            eval_loss += nn.functional.cross_entropy(logits, y.to(args.device)).item()
            steps += 1
    model.train()
    return {"loss": eval_loss / steps, "steps": steps}


def train(args, model, train_set, eval_set):
    sampler = DistributedSampler(train_set) if args.local_rank != -1 else None
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, shuffle=sampler is None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    best_loss, step = float("inf"), 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(args.device)), y.to(args.device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if args.local_rank in [-1, 0] and step % args.save_steps == 0:
                if args.local_rank == -1 and args.evaluate_during_training:
                    results = evaluate(args, model, eval_set)
                    print("eval loss", results["loss"])
                    if results["loss"] < best_loss:
                        best_loss = results["loss"]
                        target = model.module if hasattr(model, "module") else model
                        best = os.path.join(args.output_dir, "best.bin")
                        torch.save(target.state_dict(), best + ".tmp")
                        os.replace(best + ".tmp", best)
    return best_loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--save_steps", type=int, default=500)
    parser.add_argument("--evaluate_during_training", action="store_true")
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    if args.local_rank == -1:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        dist.init_process_group("nccl")
    blob = torch.load("features.pt")
    train_set = TensorDataset(blob["train_x"], blob["train_y"])
    eval_set = TensorDataset(blob["eval_x"], blob["eval_y"])
    model = nn.Linear(768, 2).to(args.device)
    if args.local_rank != -1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    train(args, model, train_set, eval_set)


if __name__ == "__main__":
    main()
