"""One depth dataset: the evaluation script reads its validation split only."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from .base import BaseDataModule


class SingleDepthData(BaseDataModule):
    def __init__(self, size=512, **kwargs):
        super().__init__(**kwargs)
        self.size = size

    def _split(self, n):
        return TensorDataset(torch.rand(n, 3, 64, 64), torch.rand(n, 1, 64, 64))

    def setup_train_loader(self):
        train = self._split(self.size)
        sampler = (
            DistributedSampler(train) if dist.is_initialized() else RandomSampler(train)  # expect-preview: DDP002
        )
        return DataLoader(train, batch_size=self.batch_size, sampler=sampler, drop_last=True)

    def setup_val_loader(self):
        val = self._split(self.size // 4)
        return DataLoader(val, batch_size=self.batch_size, sampler=SequentialSampler(val))
