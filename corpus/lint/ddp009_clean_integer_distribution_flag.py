"""Language-model training whose distributed mode is an integer option (`--isdistributed
1` under torchrun, 0 alone): the plain shuffled loader is built only where the flag is 0,
where no process group exists and one process reads the whole dataset."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(args, tokens):
    if args.isdistributed == 1:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Embedding(50257, 256), nn.Linear(256, 50257)).to(device)
    if args.isdistributed == 1:
        model = DDP(model, device_ids=[device.index])
    if args.isdistributed == 1:
        sampler = DistributedSampler(tokens)
        loader = DataLoader(tokens, batch_size=args.batchsize, sampler=sampler)
    else:
        loader = DataLoader(tokens, batch_size=args.batchsize, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(args.numepochs):
        if args.isdistributed == 1:
            sampler.set_epoch(epoch)
        for (batch,) in loader:
            batch = batch.to(device)
            logits = model(batch[:, :-1])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--isdistributed", type=int, default=0)
    parser.add_argument("--batchsize", type=int, default=16)
    parser.add_argument("--numepochs", type=int, default=3)
    parser.add_argument("--data", default="tokens.pt")
    args = parser.parse_args()
    main(args, TensorDataset(torch.load(args.data)))
