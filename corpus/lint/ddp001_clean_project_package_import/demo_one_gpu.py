"""A one-GPU demo of the package: it imports `halfprec.scaling`, a module that also holds
a helper agreeing across processes, but calls only the per-process `prepare`. One process:
GPU 0, a save every epoch and a download are right here."""

import torch
import torch.nn as nn
from torchvision import datasets, transforms

from halfprec import scaling

train_set = datasets.FashionMNIST("data", download=True, transform=transforms.ToTensor())
loader = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True)
device = torch.device("cuda:0")
net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10)).to(device)
net, optimizer, scaler = scaling.prepare(net, torch.optim.Adam(net.parameters()))
for epoch in range(3):
    for images, labels in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(net(images.to(device)), labels.to(device))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save(net.state_dict(), f"demo_{epoch}.pt")
