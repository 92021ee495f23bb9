"""What a save writes and who chooses its writers: data known as such is no checkpoint
(unknown values still are), a dataset's per-item cache is not a shared file, and a library
save that picks its own writers is not "every rank writes one file"."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.saved_values import caches_item, saves_data


def saved_object(source: str) -> tuple[FileContext, cst.Call]:
    ctx = FileContext("t.py", source, cst.parse_module(source))
    (call,) = ctx.calls_to("torch.save")
    return ctx, call


@pytest.mark.parametrize(
    ("body", "data"),
    [
        ('history = {"loss": [], "acc": []}\n    torch.save(history, p)', True),
        ("torch.save(predictions, p)", True),
        ("torch.save(scores, p)", True),
        ('outputs = {"model": net.state_dict()}\n    torch.save(outputs, p)', False),
        ("results = copy.deepcopy(model)\n    torch.save(results, p)", False),
        ("stats = net.cpu()\n    torch.save(stats, p)", False),
        ("torch.save(state, p)", False),
        ("torch.save(obj, p)", False),
        ("torch.save(model.state_dict(), p)", False),
        ("torch.save(model_outputs, p)", False),
        ("torch.save(train_features.cpu(), p)", True),
        ("torch.save(test_labels.detach().cpu(), p)", True),
        ("torch.save(model.cpu(), p)", False),
        ("torch.save(train_features.numpy_state(), p)", False),
    ],
)
def test_only_positive_evidence_makes_a_save_data(body, data):
    ctx, call = saved_object(f"import copy\nimport torch\n\ndef f(p, obj):\n    {body}\n")
    assert saves_data(ctx, call.args[0].value, call) is data


def test_a_tensor_parameter_is_data_unless_callers_pass_state():
    source = """\
import torch

def dump(values: torch.Tensor, p):
    torch.save(values, p)

def other(values, p):
    torch.save(values, p)
"""
    ctx = FileContext("t.py", source, cst.parse_module(source))
    tensor, untyped = ctx.calls_to("torch.save")
    assert saves_data(ctx, tensor.args[0].value, tensor)
    assert not saves_data(ctx, untyped.args[0].value, untyped)


def test_a_cache_written_while_a_dataset_loads_an_item():
    source = """\
import torch
from torch.utils.data import Dataset

class Clips(Dataset):
    def __getitem__(self, i):
        return self.features(self.paths[i])

    def features(self, path):
        torch.save(torch.load(path).mean(0), path + ".feat")

    def export(self, out):
        torch.save(self.paths, out)
"""
    ctx = FileContext("t.py", source, cst.parse_module(source))
    item, export = ctx.calls_to("torch.save")
    assert caches_item(ctx, item)
    assert not caches_item(ctx, export)


def test_a_library_save_that_picks_its_writers_is_left_alone(write, tmp_path, cli):
    write("pyproject.toml", "")
    write("accelerate/__init__.py", "")
    write("accelerate/utils/__init__.py", "from .fsdp_utils import save_fsdp_model, save_all\n")
    write(
        "accelerate/utils/fsdp_utils.py",
        """\
        import torch

        def save_fsdp_model(plugin, accelerator, model, out):
            torch.save(model.state_dict(), f"{out}/model.bin")

        def save_all(model, out):
            torch.save(model.state_dict(), f"{out}/all.bin")
        """,
    )
    script = write(
        "test_merge.py",
        """\
        import torch.distributed as dist
        from accelerate.utils import save_all, save_fsdp_model

        if __name__ == "__main__":
            dist.init_process_group("gloo")
            save_fsdp_model(None, None, model, "out")
            save_all(model, "out")
        """,
    )
    result = cli("check", "--no-cache", "--select", "DDP013", "--output-format", "json", script)
    assert [(d["location"]["row"], d["code"]) for d in result.json()] == [(7, "DDP013")]
