"""Fine-tunes a torchvision ResNet on several GPUs of one box, with gradient accumulation."""
import argparse

import torch
from torch.nn import DataParallel as DP
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import resnet18

parser = argparse.ArgumentParser()
parser.add_argument("--gpus", type=str, default="0,1")
parser.add_argument("--accum-steps", type=int, default=4)
parser.add_argument("--epochs", type=int, default=5)
args = parser.parse_args()

gpu_ids = [int(g) for g in args.gpus.split(",")]
images = torch.randn(512, 3, 64, 64)
labels = torch.randint(0, 100, (512,))
loader = DataLoader(TensorDataset(images, labels), batch_size=64, shuffle=True)

net = resnet18(num_classes=100)
net = DP(net, device_ids=gpu_ids).cuda(gpu_ids[0])  # expect: DDP015
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

for epoch in range(args.epochs):
    net.train()
    optimizer.zero_grad()
    for step, (x, y) in enumerate(loader):
        x = x.cuda(gpu_ids[0], non_blocking=True)
        y = y.cuda(gpu_ids[0], non_blocking=True)
        loss = criterion(net(x), y) / args.accum_steps
        loss.backward()
        if (step + 1) % args.accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    print(epoch, loss.item())
