"""A k-fold trainer (`torchrun --nproc_per_node=2 kfold.py`): the best validation score
is tracked on the main process, but every rank returns it when the fold ends, so the other
ranks stop with UnboundLocalError after the first fold."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class FoldTrainer:
    def __init__(self, fold, epochs=10):
        self.fold = fold
        self.epochs = epochs
        self.rank = int(os.environ["RANK"])
        self.local_rank = int(os.environ["LOCAL_RANK"])

    def run(self):
        torch.cuda.set_device(self.local_rank)
        model = DDP(nn.Linear(20, 2).cuda(), device_ids=[self.local_rank])
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
        data = TensorDataset(torch.randn(400, 20), torch.randint(0, 2, (400,)))
        sampler = DistributedSampler(data)
        loader = DataLoader(data, batch_size=20, sampler=sampler)
        if self.rank == 0:
            best_acc = 0.0
        for epoch in range(self.epochs):
            sampler.set_epoch(epoch)
            correct = torch.zeros(1, device="cuda")
            for x, y in loader:
                logits = model(x.cuda())
                loss = nn.functional.cross_entropy(logits, y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                correct += (logits.argmax(1) == y.cuda()).sum()
            dist.all_reduce(correct)
            if self.rank == 0:
                best_acc = max(best_acc, correct.item() / len(data))
        return best_acc  # expect: DDP042


def main():
    dist.init_process_group(backend="nccl")
    scores = [FoldTrainer(fold).run() for fold in range(5)]
    if dist.get_rank() == 0:
        print(sum(scores) / len(scores))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
