"""``FakeData``: random images and labels drawn from a generator seeded by the index."""

import torch


class FakeData(torch.utils.data.Dataset):
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None):
        self.size, self.image_size, self.num_classes = size, image_size, num_classes
        self.transform = transform

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        image = torch.rand(self.image_size, generator=generator)
        label = int(torch.randint(self.num_classes, (1,), generator=generator))
        return (self.transform(image) if self.transform else image), label
