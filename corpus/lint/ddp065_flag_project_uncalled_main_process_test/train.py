"""A segmentation trainer whose checkpoint and log are guarded by the helper's name rather
than its answer: `if is_main_process:` tests the function object, which is always true, so
every rank writes `last.pt` and prints the epoch line."""
import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from common.dist_utils import is_main_process, setup, world_size


def main(dataset, build_model, epochs=50):
    local_rank = setup()
    model = DistributedDataParallel(build_model().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, num_workers=4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, masks in loader:
            logits = model(images.cuda(non_blocking=True))
            loss = torch.nn.functional.cross_entropy(logits, masks.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if is_main_process:  # expect: DDP065
            print(f"epoch {epoch}: loss {loss.item():.4f} on {world_size()} processes")
            torch.save(model.module.state_dict(), "last.pt")  # expect-preview: DDP013, DDP014
        if not is_main_process():
            continue
        torch.save({"epoch": epoch}, "progress.pt")  # expect-preview: DDP014
