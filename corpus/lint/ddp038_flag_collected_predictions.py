"""Forecasting test: every rank reads its shard of the test set, collects its predictions
and prints (and appends to the results file) MSE/MAE of that shard as the test result."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def metric(pred, true):
    return np.mean(np.abs(pred - true)), np.mean((pred - true) ** 2)


class Experiment:
    def __init__(self, model, test_set, batch_size):
        self.model = model
        self.test_set = test_set
        self.batch_size = batch_size

    def test(self, setting):
        sampler = DistributedSampler(self.test_set, shuffle=False)
        loader = DataLoader(self.test_set, batch_size=self.batch_size, sampler=sampler)
        preds, trues = [], []
        self.model.eval()
        with torch.no_grad():
            for batch_x, batch_y in loader:
                preds.append(self.model(batch_x.cuda()).cpu())
                trues.append(batch_y)
        print(f"{len(preds)} batches tested")
        preds = torch.cat(preds, dim=0).numpy()
        trues = torch.cat(trues, dim=0).numpy()
        mae, mse = metric(preds, trues)
        print("mse:{}, mae:{}".format(mse, mae))  # expect: DDP038
        with open("result_long_term_forecast.txt", "a") as handle:
            handle.write(f"{setting}  mse:{mse}, mae:{mae}\n")


def main(model, test_set):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    Experiment(model, test_set, 32).test("etth1_672_96")
