"""The same trainer written right: the helper is called, and the logging function takes
a flag of the same name (a boolean the caller computed), which is no function."""
import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from common.dist_utils import is_main_process, setup, world_size


def log_epoch(epoch, loss, is_main_process=False):
    if is_main_process:
        print(f"epoch {epoch}: loss {loss:.4f} on {world_size()} processes")


def main(dataset, build_model, epochs=50):
    local_rank = setup()
    model = DistributedDataParallel(build_model().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, num_workers=4)
    main_rank = is_main_process()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, masks in loader:
            logits = model(images.cuda(non_blocking=True))
            loss = torch.nn.functional.cross_entropy(logits, masks.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        log_epoch(epoch, loss.item(), is_main_process=main_rank)
        if is_main_process():
            torch.save(model.module.state_dict(), "last.pt")  # expect-preview: DDP014
