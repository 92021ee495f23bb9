"""Step-based training (no epochs in the CLI): the loader is re-iterated as it runs out."""
import argparse
import math
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from mylib.data import TokenDataset
from mylib.models import TransformerLM


def get_world_size():
    return dist.get_world_size() if dist.is_initialized() else 1


def cosine_lr(step, warmup, total, base_lr):
    if step < warmup:
        return base_lr * step / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1 + math.cos(math.pi * progress))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="/data/tokens")
    parser.add_argument("--max-steps", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--save-every", type=int, default=5_000)
    parser.add_argument("--out", default="ckpt")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(f"cuda:{local_rank}")
    dist.init_process_group(backend="nccl")
    world_size = get_world_size()
    is_master = dist.get_rank() == 0

    model = TransformerLM(vocab_size=50304, n_layer=12).cuda()
    model = DDP(model, device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), fused=True)

    dataset = TokenDataset(args.data, seq_len=1024)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=4, pin_memory=True)

    epoch = 0
    sampler.set_epoch(epoch)
    batches = iter(loader)
    step = 0
    log_loss = torch.zeros((), device="cuda")
    while step < args.max_steps:
        try:
            x, y = next(batches)
        except StopIteration:
            epoch += 1
            sampler.set_epoch(epoch)
            batches = iter(loader)
            x, y = next(batches)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        for group in opt.param_groups:
            group["lr"] = cosine_lr(step, args.warmup, args.max_steps, args.lr)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, targets=y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1

        log_loss += loss.detach()
        if step % 100 == 0:
            dist.all_reduce(log_loss)
            log_loss /= world_size * 100
            if is_master:
                print(f"step {step} loss {log_loss.item():.4f}")
            log_loss.zero_()

        if step % args.save_every == 0 and is_master:
            os.makedirs(args.out, exist_ok=True)
            path = os.path.join(args.out, f"step_{step:07d}.pt")
            tmp = path + ".tmp"
            torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
            os.replace(tmp, path)

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
