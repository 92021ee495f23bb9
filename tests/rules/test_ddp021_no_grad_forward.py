"""DDP021: a rank-local forward with gradients off builds no graph, so no backward of the
file reaches it, even through a loss helper the training step's backward also reads."""

from __future__ import annotations

from ddplint.api import lint_source

SOURCE = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, net, local_rank):
        self.model = DDP(net.cuda(local_rank), device_ids=[local_rank])

    def compute(self, output, y):
        return (output - y).pow(2).mean()

    def train_step(self, x, y):
        loss = self.compute(self.model(x), y)
        loss.backward()

    def valid_epoch(self, batches):
        if dist.get_rank() != 0:
            return
        GRADIENTS
            for x, y in batches:
                output = self.model(x)
                loss = self.compute(output, y)
                print(loss.item())
"""


def _messages(gradients: str) -> list[str]:
    source = SOURCE.replace("GRADIENTS", gradients)
    return [d.message for d in lint_source(source, select=["DDP021"])]


def test_a_forward_with_gradients_off_is_not_called_a_training_forward():
    (message,) = _messages("with torch.no_grad():")
    assert "reaches `backward()`" not in message


def test_a_forward_with_gradients_on_still_is():
    (message,) = _messages("with torch.enable_grad():")
    assert "reaches `backward()`" in message
