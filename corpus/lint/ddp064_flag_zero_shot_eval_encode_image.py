"""CLIP fine-tuning whose per-epoch zero-shot check embeds the class prompts and the test
images with `model.encode_text` / `model.encode_image`, methods of the CLIP model, read on
the DDP wrapper: rank 0 raises AttributeError at the end of the first epoch (the others
then wait at the next barrier)."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main(epochs=10):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    pairs = torch.load("image_text_pairs.pt")
    sampler = DistributedSampler(pairs)
    loader = DataLoader(pairs, batch_size=64, sampler=sampler, drop_last=True)
    model = DDP(torch.load("clip_vit_b32.pt").cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.1)
    prompts = torch.load("class_prompts.pt").cuda()
    probe = torch.load("probe_images.pt")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for images, tokens in loader:
            logits_per_image, logits_per_text = model(images.cuda(), tokens.cuda())
            targets = torch.arange(images.size(0), device=logits_per_image.device)
            loss = (F.cross_entropy(logits_per_image, targets)
                    + F.cross_entropy(logits_per_text, targets)) / 2
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            with torch.no_grad():
                text = F.normalize(model.encode_text(prompts), dim=-1)  # expect: DDP064
                image = F.normalize(model.encode_image(probe["images"].cuda()), dim=-1)  # expect: DDP064
                accuracy = ((image @ text.T).argmax(1).cpu() == probe["labels"]).float().mean()
            print(f"epoch {epoch}: zero-shot accuracy {accuracy:.3f}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
