"""The OOM is logged with the batch's shape, then raised: torchrun stops every rank."""

import logging

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

logger = logging.getLogger(__name__)


def train_step(model: DDP, batch, optimizer):
    try:
        loss = model(batch.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    except RuntimeError as error:
        is_oom = "CUDA out of memory" in str(error)
        if is_oom:
            logger.error("OOM on a batch of shape %s", tuple(batch.shape))
            torch.cuda.empty_cache()
        raise
