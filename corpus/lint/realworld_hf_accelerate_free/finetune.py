"""Fine-tune a sequence classifier with plain torchrun + DDP (no Trainer, no accelerate).

torchrun --nproc_per_node=8 finetune.py --model_name bert-base-uncased --output_dir out
"""
import argparse
import contextlib
import math
import os

import torch
import torch.distributed as dist
from datasets import load_from_disk
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

from data import collate_batch


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="bert-base-uncased")
    p.add_argument("--data_dir", default="data/tokenized")
    p.add_argument("--output_dir", default="out")
    p.add_argument("--num-epochs", type=int, default=3)
    p.add_argument("--per_device_batch_size", type=int, default=16)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--warmup_ratio", type=float, default=0.06)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--bf16", action="store_true")
    return p.parse_args()


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(torch.device("cuda", local_rank))
    dist.init_process_group(backend="nccl")
    return dist.get_rank(), local_rank, dist.get_world_size()


def load_pretrained(model_name, rank, num_labels):
    # rank 0 downloads into the HF cache first; the others then read the cached files
    if rank != 0:
        dist.barrier()
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=num_labels)
    if rank == 0:
        dist.barrier()
    return tokenizer, model


@torch.no_grad()
def evaluate(model, loader, device, world_size):
    model.eval()
    totals = torch.zeros(3, device=device)  # loss sum, correct, count
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        outputs = model(**batch)
        preds = outputs.logits.argmax(dim=-1)
        n = batch["labels"].numel()
        totals[0] += outputs.loss.detach() * n
        totals[1] += (preds == batch["labels"]).sum()
        totals[2] += n
    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
    model.train()
    return (totals[0] / totals[2]).item(), (totals[1] / totals[2]).item()


def main():
    args = parse_args()
    rank, local_rank, world_size = setup()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1234)

    splits = load_from_disk(args.data_dir)
    train_ds, eval_ds = splits["train"], splits["validation"]
    num_labels = len(set(train_ds["labels"]))
    tokenizer, model = load_pretrained(args.model_name, rank, num_labels)
    model.to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    train_shards = DistributedSampler(train_ds, shuffle=True, seed=1234, drop_last=True)
    eval_sampler = DistributedSampler(eval_ds, shuffle=False)  # expect-preview: DDP003
    train_loader = DataLoader(
        train_ds,
        batch_size=args.per_device_batch_size,
        sampler=train_shards,
        collate_fn=collate_batch(tokenizer),
        num_workers=4,
        pin_memory=True,
    )
    eval_loader = DataLoader(
        eval_ds, batch_size=args.per_device_batch_size * 2, sampler=eval_sampler, collate_fn=collate_batch(tokenizer)
    )

    no_decay = ("bias", "LayerNorm.weight")
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optim = torch.optim.AdamW(grouped, lr=args.lr)
    updates_per_epoch = math.ceil(len(train_loader) / args.grad_accum)
    total_updates = updates_per_epoch * args.num_epochs
    scheduler = get_linear_schedule_with_warmup(optim, int(args.warmup_ratio * total_updates), total_updates)
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float32

    global_step = 0
    for epoch in range(args.num_epochs):
        train_shards.set_epoch(epoch)
        model.train()
        optim.zero_grad(set_to_none=True)
        for step, batch in enumerate(train_loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            is_update_step = (step + 1) % args.grad_accum == 0 or step + 1 == len(train_loader)
            sync_context = contextlib.nullcontext() if is_update_step else model.no_sync()
            with sync_context:
                with torch.autocast("cuda", dtype=amp_dtype, enabled=args.bf16):
                    outputs = model(**batch)
                loss = outputs.loss / args.grad_accum
                loss.backward()
            if is_update_step:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optim.step()
                scheduler.step()
                optim.zero_grad(set_to_none=True)
                global_step += 1
                if rank == 0 and global_step % 50 == 0:
                    print(f"epoch {epoch} step {global_step} loss {loss.item() * args.grad_accum:.4f}")

        eval_loss, eval_acc = evaluate(model, eval_loader, device, world_size)
        if rank == 0:
            print(f"epoch {epoch}: eval_loss={eval_loss:.4f} eval_acc={eval_acc:.4f}")

    if rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        model.module.save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
