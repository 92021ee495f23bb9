"""A two-stage schedule: the task returns no loss for the optimizer that is not trained
at this global step. Whether it returns None follows the step count and the config,
the same on every rank, so every rank skips the same steps."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class TwoStageTask(nn.Module):
    def __init__(self, switch_step):
        super().__init__()
        self.encoder = nn.Linear(80, 192)
        self.flow = nn.Linear(192, 192)
        self.switch_step = switch_step
        self.global_step = 0

    def forward(self, mel, opt_idx):
        if opt_idx == 1 and self.global_step < self.switch_step:
            return {"loss": None}
        hidden = self.encoder(mel)
        out = self.flow(hidden) if opt_idx == 1 else hidden
        return {"loss": out.pow(2).mean()}


class Trainer:
    def __init__(self, task, optimizers, amp=True):
        self.task = task
        self.optimizers = optimizers
        self.amp = amp
        self.scaler = torch.cuda.amp.GradScaler(enabled=amp)

    def run_batch(self, batch_idx, batch):
        for opt_idx, optimizer in enumerate(self.optimizers):
            with torch.autocast("cuda", enabled=self.amp):
                args = [batch.cuda(non_blocking=True), opt_idx]
                output = self.task(*args)
                loss = output["loss"]
                if loss is None:
                    continue
            optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(optimizer)
            self.scaler.update()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    task = TwoStageTask(switch_step=1000).cuda()
    model = DDP(task, device_ids=[local_rank])
    optimizers = [
        torch.optim.AdamW(task.encoder.parameters(), lr=2e-4),
        torch.optim.AdamW(task.flow.parameters(), lr=2e-4),
    ]
    loader = [torch.randn(16, 80) for _ in range(100)]
    for epoch in range(50):
        task.global_step = epoch * len(loader)
        trainer = Trainer(model, optimizers)
        for batch_idx, batch in enumerate(loader):
            trainer.run_batch(batch_idx, batch)


if __name__ == "__main__":
    main()
