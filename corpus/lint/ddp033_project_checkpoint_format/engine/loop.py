"""The epoch loop: train, then let rank 0 write the epoch's checkpoint."""
import torch.distributed as dist

from engine.checkpointing import save_checkpoint


def fit(model, loader, sampler, optimizer, scheduler, criterion, start_epoch, epochs, out_dir):
    for epoch in range(start_epoch, epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, masks in loader:
            loss = criterion(model(images.cuda()), masks.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if dist.get_rank() == 0:
            save_checkpoint(model, optimizer, scheduler, epoch, out_dir)
