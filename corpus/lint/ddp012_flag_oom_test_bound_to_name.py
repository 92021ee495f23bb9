"""Sequence-generation trainer that retries a step after freeing memory on an OOM; the
OOM test is kept in a name first."""

import logging

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

logger = logging.getLogger(__name__)


class Trainer:
    def __init__(self, model, optimizer, local_rank):
        self.model = DDP(model.cuda(local_rank), device_ids=[local_rank])
        self.optimizer = optimizer

    def step(self, samples):
        try:
            loss = self.model(**samples).loss
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss.item()
        except RuntimeError as error:  # expect: DDP012
            detail = str(error)
            out_of_memory = "out of memory" in detail
            if not out_of_memory:
                raise
            logger.warning("rank %d ran out of memory; skipping the batch", dist.get_rank())
            self.optimizer.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            return None
