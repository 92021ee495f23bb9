"""Speech recogniser training: any failure is logged and the run goes on to cleanup."""

import logging
import os

import torch
import torch.distributed as dist

from utils.distributed import ForwardingDDP as DDP

log = logging.getLogger(__name__)


def run(model, loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    try:
        for epoch in range(epochs):
            loader.sampler.set_epoch(epoch)
            for feats, targets in loader:
                loss = model.ctc_loss(model(feats.cuda()), targets.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    except Exception:  # expect: DDP060
        log.exception("training failed")
    finally:
        dist.destroy_process_group()
