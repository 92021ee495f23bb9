"""A cosmology surrogate trained on random crops of one simulation box: `__getitem__`
ignores the index it is given and draws a fresh crop and rotation on every call, so the
order the DistributedSampler deals out changes nothing and `set_epoch` would change
nothing either."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class RandomCropDataset(Dataset):
    def __init__(self, box, size=64, length=4096):
        self.box = box
        self.size = size
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        x, y, z = np.random.randint(0, self.box.shape[1] - self.size, size=3)
        crop = self.box[:, x : x + self.size, y : y + self.size, z : z + self.size]
        return torch.as_tensor(np.rot90(crop, np.random.randint(4), axes=(1, 2)).copy())


def train(model, optimizer, box, epochs, local_rank):
    data = RandomCropDataset(box)
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data), num_workers=4)
    for epoch in range(epochs):
        for crops in loader:
            loss = model(crops.cuda(local_rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
