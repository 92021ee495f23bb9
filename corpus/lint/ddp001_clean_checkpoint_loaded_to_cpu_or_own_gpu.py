"""The same fine-tuning done right: the checkpoint goes to host memory, or straight to the
process's own GPU (`map_location=f"cuda:{local_rank}"`); the evaluation helper loading on
`"cuda:0"` runs only on rank 0 after training."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def evaluate_best(build, path, loader):
    model = build().cuda(0)
    model.load_state_dict(torch.load(path, map_location="cuda:0"))
    model.eval()
    with torch.no_grad():
        return sum((model(x.cuda(0)).argmax(1) == y.cuda(0)).sum().item() for x, y in loader)


def main(build, pretrained, loader, test_loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = build().cuda()
    model.load_state_dict(torch.load(pretrained, map_location="cpu")["model"])
    resume = torch.load("last.pt", map_location=f"cuda:{local_rank}")
    model.load_state_dict(resume["model"])
    model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "best.pt")  # expect-preview: DDP014
        print(evaluate_best(build, "best.pt", test_loader))
