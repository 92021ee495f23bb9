"""Paired translation GAN. Rank 0 renders samples through the DDP-wrapped generator under
`no_grad` after each epoch. Its BatchNorm keeps no running statistics
(`track_running_stats=False`): no buffer, so that forward broadcasts nothing and pairs with
nothing. The generator is built in another module, whose layers the proof of a buffer-free
model does not follow: whether it holds buffers is unknown, and the finding is shown by
--preview only."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from networks import Critic, Translator


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    pairs = TensorDataset(torch.randn(1024, 3, 64, 64), torch.randn(1024, 3, 64, 64))
    sampler = DistributedSampler(pairs, shuffle=True, drop_last=True)
    loader = DataLoader(pairs, batch_size=16, sampler=sampler)
    gen = DDP(Translator().to(device), device_ids=[local_rank])
    critic = DDP(Critic().to(device), device_ids=[local_rank])
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_c = torch.optim.Adam(critic.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for source, target in loader:
            source, target = source.to(device), target.to(device)
            fake = gen(source)
            real_logits = critic(source, target)
            fake_logits = critic(source, fake.detach())
            c_loss = F.softplus(-real_logits).mean() + F.softplus(fake_logits).mean()
            opt_c.zero_grad()
            c_loss.backward()
            opt_c.step()
            g_loss = F.softplus(-critic(source, fake)).mean() + 10 * F.l1_loss(fake, target)
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        if dist.get_rank() == 0:
            with torch.no_grad():
                preview = gen(source[:4])  # expect-preview: DDP021
            torch.save(preview.cpu(), f"samples_{epoch:03d}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
