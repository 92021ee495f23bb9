"""Distributed training of the segmenter. Snapshots keep the DDP wrapper's keys
(`module.` prefix): the inference tool in the sibling `tools/` folder builds the same
network and strips the prefix before its strict load, so the keys round-trip."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from nets.segmenter import Segmenter


def main(iterations=20000, eval_every=2000, out="work_dirs"):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(Segmenter().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step in range(iterations):
        images = torch.randn(4, 3, 64, 64).cuda()
        labels = torch.randint(0, 21, (4, 64, 64)).cuda()
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (step + 1) % eval_every == 0 and dist.get_rank() == 0:
            torch.save(model.state_dict(), os.path.join(out, f"iter_{step + 1}.pth"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
