"""A diffusion fine-tuning loop that stops at `max_steps`, counted inside the rank-0
logging block: rank 0 breaks out at `max_steps` while the other ranks, whose counter never
moved, start the next step and wait in DDP's gradient all-reduce."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def finetune(unet, loader, noise_scheduler, args):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(args.local_rank)
    model = DDP(unet.cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    completed = 0
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        for latents in loader:
            if completed >= args.max_steps:
                break  # expect: DDP047
            latents = latents.cuda(non_blocking=True)
            noise = torch.randn_like(latents)
            t = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
            noisy = noise_scheduler.add_noise(latents, noise, t)
            loss = torch.nn.functional.mse_loss(model(noisy, t), noise)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if rank == 0:
                print(f"epoch {epoch} step {completed}: {loss.item():.4f}")
                completed += 1
