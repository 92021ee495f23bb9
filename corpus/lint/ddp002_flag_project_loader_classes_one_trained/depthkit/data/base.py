"""A data module builds its loaders once, for training or for validation only."""
from abc import ABC, abstractmethod


class BaseDataModule(ABC):
    def __init__(self, batch_size=8, num_workers=4):
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.train_loader = None
        self.val_loader = None

    def setup(self, stage="train"):
        if stage == "train":
            self.train_loader = self.setup_train_loader()
        self.val_loader = self.setup_val_loader()

    @abstractmethod
    def setup_train_loader(self):
        ...

    @abstractmethod
    def setup_val_loader(self):
        ...
