"""A trajectory-prediction trainer that validates on rank 0 and steps its plateau
scheduler there with the validation loss: only rank 0's learning rate ever drops, so from
the first reduction on the ranks apply different updates to the same averaged gradients."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(model, loader):
    total, count = 0.0, 0
    with torch.no_grad():
        for agents, future in loader:
            total += torch.nn.functional.smooth_l1_loss(model(agents), future).item()
            count += 1
    return total / max(count, 1)


def main(net, train_loader, val_loader, local_rank, epochs):
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=3)
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for agents, future in train_loader:
            loss = torch.nn.functional.smooth_l1_loss(model(agents.cuda()), future.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            val_loss = validate(model.module, val_loader)
            scheduler.step(val_loss)  # expect: DDP044
