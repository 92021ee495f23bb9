"""Scores a distilled dataset: each rank trains fresh models on it, rank 0 computes the
mean and spread of its accuracies, and every rank returns them. The rank comes from the
set-up helper of another module (`self.rank`); on ranks other than 0 the summary names are
never bound, and the return raises UnboundLocalError at the end of every evaluation."""
import statistics

import torch
import torch.distributed as dist

from bench.utils.distributed import setup_dist


class DistilledEvaluator:
    def __init__(self, images, labels, make_model, use_dist=True, repeats=5):
        self.images, self.labels = images, labels
        self.make_model, self.repeats = make_model, repeats
        self.use_dist = use_dist
        if self.use_dist:
            setup_dist(self)
        else:
            self.rank = 0
            self.gpu = 0
            self.world_size = 1

    def _train_once(self, seed):
        torch.manual_seed(seed)
        model = self.make_model().cuda(self.gpu)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        for _ in range(300):
            loss = torch.nn.functional.cross_entropy(model(self.images.cuda(self.gpu)), self.labels.cuda(self.gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return float((model(self.images.cuda(self.gpu)).argmax(1) == self.labels.cuda(self.gpu)).float().mean())

    def compute(self):
        accuracies = [self._train_once(seed) for seed in range(self.repeats)]
        if self.rank == 0:
            mean = statistics.mean(accuracies)
            spread = statistics.pstdev(accuracies)
            print(f"distilled-set accuracy {mean:.4f} +- {spread:.4f}")
        if self.use_dist:
            dist.destroy_process_group()
        return {
            "mean": mean,  # expect: DDP042
            "std": spread,  # expect: DDP042
        }
