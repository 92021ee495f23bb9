"""Grounding evaluation: Grad-CAM needs a backward through the image-text matching head of
the bare model; nothing is updated, so no gradient needs averaging."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def gradcam_maps(model, loader, block):
    maps = []
    for image, tokens in loader:
        image = image.cuda()
        embeds = model.visual_encoder(image)
        score = model.itm_head(model.text_encoder(tokens.cuda(), embeds)[:, 0]).sum()
        model.zero_grad()
        score.backward()
        with torch.no_grad():
            attention = model.cross_attention(block).attention_map()
            gradients = model.cross_attention(block).attention_gradients().clamp(min=0)
            maps.append((attention * gradients).mean(1).cpu())
    return maps


def evaluate(net, loader, local_rank, block=8):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    model_without_ddp = model.module
    maps = gradcam_maps(model_without_ddp, loader, block)
    if dist.get_rank() == 0:
        torch.save(maps, "gradcam_maps.pt")
