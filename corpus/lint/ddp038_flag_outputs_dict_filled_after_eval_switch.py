"""An RNA reactivity trainer validates inside its training function: after `model.eval()` it
fills a dict of concatenated predictions and targets over the sharded validation loader, and
rank 0 logs the score of its own shard as the validation score."""
import os
from collections import defaultdict

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def mae(outputs):
    return (outputs["pred"] - outputs["target"]).abs().mean().item()


def fit(net, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        torch.set_grad_enabled(True)
        for seq, target in train_loader:
            loss = torch.nn.functional.l1_loss(model(seq.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        torch.set_grad_enabled(False)
        outputs = defaultdict(list)
        for index, (seq, target) in enumerate(val_loader):
            pred = model(seq.cuda())
            if "pred" not in outputs:
                outputs["pred"], outputs["target"] = pred, target.cuda()
            else:
                outputs["pred"] = torch.cat([outputs["pred"], pred])
                outputs["target"] = torch.cat([outputs["target"], target.cuda()])
        score = mae(outputs)
        if rank == 0:
            print(f"epoch {epoch}: validation MAE {score:.4f}")  # expect: DDP038
