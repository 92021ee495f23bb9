"""Translation fine-tuning, one process per GPU (started by mp.spawn below).

The development set is decoded whole by every process (`make_loader(..., 1, None)`: no
DistributedSampler), so rank 0's corpus score covers every sentence."""

import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

from data import make_loader


def corpus_score(hypotheses, references):
    matched = sum(len(set(h) & set(r)) for h, r in zip(hypotheses, references))
    return matched / max(1, sum(len(r) for r in references))


def worker(rank, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=args.gpus)
    torch.cuda.set_device(rank)
    model = DDP(torch.nn.Transformer(d_model=256).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    train_loader = make_loader(args.train, args.batch_size, True, args.gpus, rank)
    dev_loader = make_loader(args.dev, args.batch_size, False, 1, None)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for source, target in train_loader:
            loss = model(source.cuda(rank), target.cuda(rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            hypotheses, references = [], []
            with torch.no_grad():
                for source, target in dev_loader:
                    output = model.module(source.cuda(rank), target.cuda(rank))
                    hypotheses.extend(output.argmax(-1).tolist())
                    references.extend(target.tolist())
            print(f"epoch {epoch}: dev score {corpus_score(hypotheses, references):.3f}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="train.pt")
    parser.add_argument("--dev", default="dev.pt")
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=10)
    mp.spawn(worker, args=(parser.parse_args(),), nprocs=parser.parse_args().gpus)
