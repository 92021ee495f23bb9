"""Evaluation helpers of the detector: each runs on the main process only, gated here."""
import torch
import torch.distributed as dist


@torch.no_grad()
def validate(model, loader, device):
    if dist.get_rank() == 0:
        model.eval()
        losses = []
        for images, targets in loader:
            scores = model(images.to(device))  # expect: DDP021
            losses.append(torch.nn.functional.mse_loss(scores, targets.to(device)).item())
        model.train()
        print("val loss", sum(losses) / max(len(losses), 1))


@torch.no_grad()
def sample(model, device):
    if dist.get_rank() == 0:
        return model(torch.zeros(1, 3, 64, 64, device=device))
    return None
