"""A trainer whose saves return early unless `self.args.is_master_node`: a flag named for
the main process whose value this file does not show (it is set in another package from
the rank, or from an environment variable). Not proven to run on every rank, not proven
to run on one: the finding is shown only under `--preview`."""

import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, args, model, loader):
        self.args = args
        self.model = model
        self.loader = loader

    def train(self):
        dist.init_process_group("nccl")
        for step, batch in enumerate(self.loader):
            loss = self.model(batch).mean()
            loss.backward()
            self.after_step(step)

    def after_step(self, step):
        if step % self.args.save_steps == 0:
            self.save_checkpoint(step)  # expect-preview: DDP013

    def save_checkpoint(self, step):
        if not self.args.is_master_node:
            return
        torch.save(self.model.state_dict(), f"checkpoint_{step}.pt")
