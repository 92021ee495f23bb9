"""DDP047: a `break` / `return` only some ranks take while the others go on to collectives."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

HEADER = """\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def fit_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

"""


def findings(body: str) -> list[tuple[int, bool]]:
    """(row counted in `body`, unproven) of each DDP047 finding."""
    offset = HEADER.count("\n")
    found = lint_source(HEADER + textwrap.dedent(body), select=["DDP047"])
    return [(d.start.row - offset, d.unproven) for d in found]


EPOCHS = """\
def main(net, loader, validate, epochs):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        fit_one_epoch(model, loader, optimizer)
        {decision}
"""


def test_break_on_rank_zero_early_stop():
    body = EPOCHS.format(
        decision="if rank == 0:\n"
        "            if validate(model.module) > 1.0:\n"
        "                break"
    )
    assert findings(body) == [(10, False)]


def test_message_names_the_gate_and_the_collective():
    decision = "if rank == 0 and validate(model.module) > 1.0:\n            break"
    body = EPOCHS.format(decision=decision)
    source = HEADER + textwrap.dedent(body)
    (finding,) = lint_source(source, select=["DDP047"])
    assert "`rank == 0 and validate(model.module) > 1.0`" in finding.message
    assert "fit_one_epoch(model, loader, optimizer)" in finding.message
    assert "gradient all-reduce" in finding.message


def test_broadcast_decision_is_left_alone():
    body = EPOCHS.format(
        decision="stop = torch.zeros(1)\n"
        "        if rank == 0:\n"
        "            stop.fill_(float(validate(model.module) > 1.0))\n"
        "        dist.broadcast(stop, src=0)\n"
        "        if stop.item():\n"
        "            break"
    )
    assert findings(body) == []


def test_every_branch_leaving_is_left_alone():
    body = EPOCHS.format(
        decision="if rank == 0:\n            print(epoch)\n            break\n        else:\n"
        "            break"
    )
    assert findings(body) == []


def test_return_before_the_wrap_under_an_option():
    body = """\
    def main(args, net, loader):
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        if rank == 0 and args.test_only:
            print(net(torch.zeros(1)))
            return
        model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
        fit_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    """
    assert findings(body) == [(6, False)]


def test_others_leaving_on_the_same_flag_is_left_alone():
    body = """\
    def main(args, net, loader):
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        if rank == 0 and args.test_only:
            print(net(torch.zeros(1)))
            return
        if args.test_only:
            return
        model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
        fit_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    """
    assert findings(body) == []


def test_loop_run_by_rank_zero_alone_is_left_alone():
    body = """\
    def main(net, loader, samples):
        dist.init_process_group("nccl")
        model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(3):
            fit_one_epoch(model, loader, optimizer)
            if dist.get_rank() == 0:
                for i, sample in enumerate(samples):
                    if i > 3:
                        break
                    print(model.module(sample))
    """
    assert findings(body) == []


def test_nothing_collective_after_the_return_is_left_alone():
    body = """\
    def main(net, loader):
        dist.init_process_group("nccl")
        model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
        fit_one_epoch(model, loader, torch.optim.Adam(model.parameters()))
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "final.pt")
            return
        print("done")
    """
    assert findings(body) == []


def test_rank_spelled_only_in_a_name_is_unproven():
    body = """\
    class Trainer:
        def fit(self, loader, epochs):
            for epoch in range(epochs):
                fit_one_epoch(self.model, loader, self.optimizer)
                dist.all_reduce(torch.zeros(1))
                if self.is_master and self.should_stop():
                    break
    """
    assert findings(body) == [(7, True)]


def test_flag_set_out_of_sight_is_unproven():
    body = """\
    def train(net, loader, callbacks):
        dist.init_process_group("nccl")
        model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
        optimizer = torch.optim.Adam(model.parameters())
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            if dist.get_rank() == 0:
                callbacks.run("on_batch_end", model)
                if callbacks.stop_training:
                    return
    """
    assert findings(body) == [(12, True)]


TRAINER = """\
class Trainer:
    def __init__(self, net, loader, optimizer):
        self.model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
        self.loader = loader
        self.optimizer = optimizer
        self.stop = False

    def _judge(self, score):
        if score > 1.0:
            self.stop = True

    {agree}

    def fit(self, epochs, validate):
        for epoch in range(epochs):
            fit_one_epoch(self.model, self.loader, self.optimizer)
            {in_loop}
            if self.stop:
                break
        {after_loop}
"""
JUDGE = "if dist.get_rank() == 0:\n{indent}    self._judge(validate(self.model.module))"


def trainer(agree: str = "", before_test: str = "", judged_after_loop: bool = False) -> str:
    in_loop = "" if judged_after_loop else JUDGE.format(indent=" " * 12)
    after_loop = JUDGE.format(indent=" " * 8) if judged_after_loop else ""
    return TRAINER.format(
        agree=agree, in_loop=f"{in_loop}\n            {before_test}", after_loop=after_loop
    )


def test_attribute_set_in_a_rank_only_method_decides_the_exit():
    source = HEADER + textwrap.dedent(trainer())
    (finding,) = lint_source(source, select=["DDP047"])
    assert not finding.unproven
    assert "`self.stop` changes in `self._judge()`" in finding.message
    assert "`dist.get_rank() == 0`" in finding.message


def test_attribute_agreed_on_every_rank_before_the_test_is_silent():
    agree = (
        "def _agree(self):\n"
        "        flag = torch.tensor([float(self.stop)])\n"
        "        dist.broadcast(flag, src=0)\n"
        "        self.stop = bool(flag.item())"
    )
    assert findings(trainer(agree=agree, before_test="self._agree()")) == []


def test_attribute_set_from_outside_the_class_is_silent():
    body = trainer() + "\ndef stop_now(trainer):\n    trainer.stop = True\n"
    assert findings(body) == []


def test_attribute_changed_only_after_the_loop_is_silent():
    assert findings(trainer(judged_after_loop=True)) == []
