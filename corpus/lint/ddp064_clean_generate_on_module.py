"""The same captioning trainer done right: generation, which needs no gradient
synchronisation, runs on the bare captioner (`model.module` where the model is wrapped,
through the usual `model_without_ddp` name), and the wrapper is asked only for what it
has itself (`parameters()`, `state_dict()`, `no_sync()`)."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main(epochs=20, accumulation=2):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = torch.load("coco_captions.pt")
    sampler = DistributedSampler(data["train"])
    loader = DataLoader(data["train"], batch_size=32, sampler=sampler)
    model = DDP(torch.load("captioner.pt").cuda(), device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, (images, tokens) in enumerate(loader):
            last = (step + 1) % accumulation == 0
            with model.no_sync() if not last else torch.enable_grad():
                logits = model(images.cuda(), tokens[:, :-1].cuda())
                loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten().cuda())
                loss.backward()
            if last:
                optimizer.step()
                optimizer.zero_grad()
        if dist.get_rank() == 0:
            model.eval()
            with torch.no_grad():
                images, _ = next(iter(DataLoader(data["val"], batch_size=8)))
                captions = model_without_ddp.generate(images.cuda(), max_len=20)
            print(epoch, captions[:2])
            torch.save(model.module.state_dict(), "captioner.tmp")
            os.replace("captioner.tmp", f"captioner_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
