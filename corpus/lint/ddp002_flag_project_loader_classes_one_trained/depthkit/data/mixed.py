"""Several depth datasets mixed for training: what the training script reads."""
import torch
import torch.distributed as dist
from torch.utils.data import ConcatDataset, DataLoader, RandomSampler, SequentialSampler
from torch.utils.data import TensorDataset
from torch.utils.data.distributed import DistributedSampler

from .base import BaseDataModule


class MixedDepthData(BaseDataModule):
    def __init__(self, sizes=(512, 256), **kwargs):
        super().__init__(**kwargs)
        self.sizes = sizes

    def _mix(self, scale=1):
        parts = [
            TensorDataset(torch.rand(n // scale, 3, 64, 64), torch.rand(n // scale, 1, 64, 64))
            for n in self.sizes
        ]
        return ConcatDataset(parts)

    def setup_train_loader(self):
        train = self._mix()
        sampler = DistributedSampler(train) if dist.is_initialized() else RandomSampler(train)  # expect: DDP002
        return DataLoader(
            train, batch_size=self.batch_size, sampler=sampler, num_workers=self.num_workers
        )

    def setup_val_loader(self):
        val = self._mix(scale=4)
        return DataLoader(val, batch_size=self.batch_size, sampler=SequentialSampler(val))
