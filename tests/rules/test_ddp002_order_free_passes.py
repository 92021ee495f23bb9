"""DDP002 and a loader whose every pass sums over the whole of it before one optimizer
step after the pass (an importance estimate, a full-batch gradient): the order its sampler
deals out changes nothing, so a missing `set_epoch` is no harm there. A pass that steps an
optimizer inside, or may (a helper out of sight, a method of another object), is still
reported."""

from __future__ import annotations

from ddplint.api import lint_source

TRAINER = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


class Engine:
    def __init__(self, train_set, probe_set, model, helper):
        dist.init_process_group("nccl")
        self.model, self.helper = model, helper
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.weights_optimizer = torch.optim.SGD([model.weights], lr=0.01)
        self.train_sampler = DistributedSampler(train_set)
        self.train_loader = DataLoader(train_set, batch_size=8, sampler=self.train_sampler)
        probe_sampler = DistributedSampler(probe_set)
        self.probe_loader = DataLoader(probe_set, batch_size=8, sampler=probe_sampler)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_sampler.set_epoch(epoch)
            for step, (x, y) in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                self.model(x.cuda(), y.cuda()).backward()
                self.optimizer.step()
                if step % 100 == 0:
                    self.update_weights()

    def update_weights(self):
        self.weights_optimizer.zero_grad()
        for x, y in self.probe_loader:
            {probe_body}
        self.weights_optimizer.step()
"""


def findings(probe_body: str) -> list:
    return lint_source(TRAINER.format(probe_body=probe_body), select=["DDP002"])


def test_a_pass_summed_before_one_step_after_it_is_left_alone():
    assert findings("self.model(x.cuda(), y.cuda()).backward()") == []


def test_a_pass_stepping_inside_is_reported():
    body = "self.model(x.cuda(), y.cuda()).backward()\n            self.weights_optimizer.step()"
    [finding] = findings(body)
    assert "`self.probe_loader.sampler.set_epoch(epoch)`" in finding.message


def test_a_pass_through_another_objects_method_is_reported():
    [finding] = findings("self.helper.train_step(x, y)")
    assert "`self.probe_loader.sampler.set_epoch(epoch)`" in finding.message
