"""Fine-tuning with an EMA copy: the EMA reload runs on every rank (no file written), the
epoch checkpoint is written by every rank into the same file."""
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import utils


def main(resume=None, epochs=5, out_dir="output"):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 2)).cuda(local_rank)
    ema = copy.deepcopy(net)
    if resume:
        checkpoint = torch.load(resume, map_location="cpu")  # expect-preview: DDP036
        net.load_state_dict(checkpoint["model"])
        utils.load_ema_weights(ema, checkpoint["model_ema"])
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = TensorDataset(torch.randn(2048, 16), torch.randint(0, 2, (2048,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler, num_workers=2)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for e, p in zip(ema.parameters(), net.parameters()):
                    e.mul_(0.999).add_(p.detach(), alpha=0.001)
        state = {"model": net.state_dict(), "model_ema": ema.state_dict(), "epoch": epoch}
        utils.save_checkpoint(state, out_dir, epoch)  # expect: DDP013
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
