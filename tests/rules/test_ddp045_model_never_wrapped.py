"""DDP045: a distributed training script that shards its data but never wraps the model is
reported only where nothing it imports may wrap it or synchronise its gradients."""

from __future__ import annotations

import json
from pathlib import Path

from ddplint.cli import main

TRAIN = """\
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
{imports}

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = {model}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in DataLoader(data, batch_size=8, sampler=sampler):
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
"""


def findings(tmp_path: Path, capsys, files: dict[str, str]) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", "DDP045", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


def test_a_model_built_and_trained_without_a_wrapper_is_proven(tmp_path, capsys):
    train = TRAIN.format(imports="", model="nn.Linear(8, 1).cuda()")
    (found,) = findings(tmp_path, capsys, {"train.py": train})
    assert found["code"] == "DDP045" and not found["unproven"]
    assert "never wraps the model" in found["message"]


def test_a_wrapper_named_in_an_imported_module_makes_it_unproven(tmp_path, capsys):
    models = (
        "import torch.nn as nn\n\n\ndef build():\n"
        "    # wrapped by the caller in DistributedDataParallel when needed\n"
        "    return nn.Linear(8, 1).cuda()\n"
    )
    train = TRAIN.format(imports="from models import build", model="build()")
    (found,) = findings(tmp_path, capsys, {"train.py": train, "models.py": models})
    assert found["unproven"]


def test_gradients_averaged_by_an_imported_helper_are_clean(tmp_path, capsys):
    sync = (
        "import torch.distributed as dist\n\n\ndef sync_grads(model):\n"
        "    for p in model.parameters():\n        dist.all_reduce(p.grad)\n"
    )
    train = TRAIN.format(imports="import sync", model="nn.Linear(8, 1).cuda()")
    files = {"train.py": train, "sync.py": sync}
    assert [f for f in findings(tmp_path, capsys, files) if not f["unproven"]] == []


def test_gradients_sent_round_a_ring_by_an_imported_helper_are_silent(tmp_path, capsys):
    ring = (
        "import torch.distributed as dist\n\n\ndef pass_ring(model, rank, size):\n"
        "    for p in model.parameters():\n"
        "        dist.send(p.grad.data, dst=(rank + 1) % size)\n"
        "        dist.recv(p.grad.data, src=(rank - 1) % size)\n"
    )
    train = TRAIN.format(imports="import ring", model="nn.Linear(8, 1).cuda()")
    assert findings(tmp_path, capsys, {"train.py": train, "ring.py": ring}) == []
