"""The step counter moves on every rank, and only the printing is gated: every rank
reaches `max_steps` at the same step and breaks together."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def finetune(unet, loader, args):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(args.local_rank)
    model = DDP(unet.cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    completed = 0
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            if completed >= args.max_steps:
                break
            loss = model(batch.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            completed += 1
            if rank == 0 and completed % 50 == 0:
                print(f"step {completed}: {loss.item():.4f}")
