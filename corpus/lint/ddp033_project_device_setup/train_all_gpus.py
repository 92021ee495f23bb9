"""Shows every process the same four GPUs, so rank 0's tensors come back on cuda:0 in
every process."""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Linear(64, 64).cuda()
    if os.path.exists("last.pth"):
        net.load_state_dict(torch.load("last.pth"))  # expect: DDP033
    model = DDP(net, device_ids=[local_rank])
    for step in range(100):
        model(torch.randn(8, 64).cuda()).sum().backward()
    if dist.get_rank() == 0:
        torch.save(net.state_dict(), "last.pth")  # expect-preview: DDP014


if __name__ == "__main__":
    main()
