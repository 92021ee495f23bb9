"""One example of a collection: MNIST under DDP. It saves the wrapper's state dict, and
nothing of this example strips the `module.` prefix; the fine-tuning example beside it
loads its own ResNet weights, not this file."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def main(epochs=5):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(Net().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for _ in range(epochs):
        x, y = torch.randn(64, 1, 28, 28).cuda(), torch.randint(0, 10, (64,)).cuda()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "mnist_cnn.pt")  # expect: DDP006
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
