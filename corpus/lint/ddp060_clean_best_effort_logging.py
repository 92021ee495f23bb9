"""Language-model fine-tuning that tolerates a flaky experiment tracker: only the
logging call is guarded, never the training step."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def log_metrics(tracker, values, step):
    try:
        tracker.log(values, step=step)
    except Exception as exc:
        print(f"tracker unavailable, dropping metrics for step {step}: {exc}")


def main(tracker=None):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    tokens = torch.load("tokens.pt")
    sampler = DistributedSampler(tokens, drop_last=True)
    loader = DataLoader(tokens, batch_size=16, sampler=sampler)
    lm = nn.Sequential(nn.Embedding(32000, 512), nn.Linear(512, 32000))
    model = DDP(lm.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for step, batch in enumerate(loader):
        batch = batch.cuda()
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and tracker is not None:
            try:
                tracker.log({"loss": loss.item()}, step=step)
            except Exception:
                pass
        log_metrics(tracker, {"lr": optimizer.param_groups[0]["lr"]}, step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
