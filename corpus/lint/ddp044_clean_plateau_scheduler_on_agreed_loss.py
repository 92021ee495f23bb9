"""The same trainer done right: every rank validates its shard, the losses are averaged
with an all-reduce, and every rank steps the plateau scheduler with the same value."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(model, loader):
    total = torch.zeros(2, device="cuda")
    with torch.no_grad():
        for agents, future in loader:
            loss = torch.nn.functional.smooth_l1_loss(model(agents.cuda()), future.cuda())
            total += torch.stack([loss, torch.ones((), device="cuda")])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()


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
        val_loss = validate(model.module, val_loader)
        scheduler.step(val_loss)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val {val_loss:.4f}")
