"""Silent when unsure (issue 22): unproven findings appear only under `--preview`, marked in
every output format; opt-in rules run only when selected; findings in code that never runs
are dropped, those in code of unknown liveness are unproven; a hang finding whose rank
test rests on a name only is unproven."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ddplint.api import lint_source
from ddplint.cli import main

NAME_ONLY = """\
import os
import torch.distributed as dist


def save(model, rank):
    if rank == 0:
        dist.barrier()


def save_traced(model):
    rank = int(os.environ["RANK"])
    if rank == 0:
        dist.barrier()
"""

DOWNLOAD = """\
import torch.distributed as dist
import torchvision

dist.init_process_group("nccl")
train_set = torchvision.datasets.CIFAR10("data", train=True, download=True)
"""


# The opt-in hang rules these tests observe the model through (`Rule.default`).
HANG = ("--extend-select", "DDP009,DDP010")


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    code = main(["check", "--no-cache", *(str(a) for a in args)])
    return code, capsys.readouterr().out


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def test_default_run_hides_unproven_findings_and_counts_them(tmp_path, capsys):
    root = project(tmp_path, {"ckpt.py": NAME_ONLY})
    code, out = run(capsys, *HANG, root / "ckpt.py")
    assert code == 1
    assert out.count("DDP010") == 1 and ":13:9: DDP010" in out
    assert "1 more unproven finding hidden; `--preview` shows them." in out


def test_preview_shows_unproven_findings_marked_in_every_format(tmp_path, capsys):
    root = project(tmp_path, {"ckpt.py": NAME_ONLY})
    _, text = run(capsys, *HANG, "--preview", root / "ckpt.py")
    assert ":7:9: DDP010 [preview] " in text and ":13:9: DDP010 `dist" in text
    assert "hidden" not in text
    _, raw = run(capsys, *HANG, "--preview", "--output-format", "json", root / "ckpt.py")
    assert [d["unproven"] for d in json.loads(raw)] == [True, False]
    _, raw = run(capsys, *HANG, "--preview", "--output-format", "sarif", root / "ckpt.py")
    results = json.loads(raw)["runs"][0]["results"]
    assert [r["level"] for r in results] == ["note", "error"]
    assert results[0]["properties"] == {"unproven": True} and "properties" not in results[1]
    _, annotations = run(capsys, *HANG, "--preview", "--output-format", "github", root / "ckpt.py")
    assert annotations.startswith("::notice ") and "DDP010 [preview] " in annotations


def test_preview_from_the_configuration(tmp_path, capsys):
    root = project(tmp_path, {"ckpt.py": NAME_ONLY})
    config = '[tool.ddplint]\npreview = true\nextend-select = ["DDP010"]\n'
    (root / "pyproject.toml").write_text(config, encoding="utf-8")
    _, out = run(capsys, root / "ckpt.py")
    assert "DDP010 [preview]" in out


def test_preview_must_be_a_boolean(tmp_path, capsys):
    root = project(tmp_path, {"ckpt.py": NAME_ONLY})
    (root / "pyproject.toml").write_text('[tool.ddplint]\npreview = "yes"\n', encoding="utf-8")
    assert main(["check", "--no-cache", str(root / "ckpt.py")]) == 2
    assert "preview must be true or false" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "reported"),
    [
        ((), False),
        (("--extend-select", "DDP025"), True),
        (("--select", "ALL"), True),
        (("--select", "DDP02"), True),
        (("--select", "DDP001"), False),
    ],
)
def test_opt_in_rule_runs_only_when_selected(tmp_path, capsys, options, reported):
    root = project(tmp_path, {"data.py": DOWNLOAD})
    _, out = run(capsys, *options, root / "data.py")
    assert ("DDP025" in out) is reported


def test_opt_in_rule_from_extend_select_in_the_configuration(tmp_path, capsys):
    root = project(tmp_path, {"data.py": DOWNLOAD})
    (root / "pyproject.toml").write_text(
        '[tool.ddplint]\nextend-select = ["DDP025"]\n', encoding="utf-8"
    )
    _, out = run(capsys, root / "data.py")
    assert "DDP025" in out


def test_rules_table_and_rule_page_say_which_rules_are_default(capsys):
    assert main(["rules"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    assert rows["code"][-1] == "default"
    assert rows["DDP005"][-1] == "yes" and rows["DDP025"][-1] == "no"
    assert main(["rule", "DDP025"]) == 0
    assert "Opt-in" in capsys.readouterr().out
    assert main(["rule", "DDP005"]) == 0
    assert "In the default rule set." in capsys.readouterr().out


DIVIDED = """\
import torch.distributed as dist


def {name}(model, x):
    loss = model(x).sum() / dist.get_world_size()
    loss.backward()
"""


def test_finding_in_a_function_nothing_calls_in_a_script_is_dropped(tmp_path, capsys):
    script = DIVIDED.format(name="old_step") + '\n\nif __name__ == "__main__":\n    pass\n'
    root = project(tmp_path, {"train.py": script})
    _, out = run(capsys, "--preview", root / "train.py")
    assert "DDP005" not in out


def test_finding_in_an_uncalled_helper_of_an_imported_module_is_unproven(tmp_path, capsys):
    root = project(
        tmp_path,
        {
            "steps.py": DIVIDED.format(name="_step") + DIVIDED.format(name="step"),
            "train.py": "import steps\n",
        },
    )
    _, out = run(capsys, root / "steps.py")
    assert "2 more unproven findings hidden" in out
    _, out = run(capsys, "--preview", root / "steps.py")
    assert out.count("DDP005 [preview]") == 2


def test_public_function_of_a_module_nothing_imports_is_an_entry_point(tmp_path, capsys):
    root = project(tmp_path, {"steps.py": DIVIDED.format(name="step")})
    _, out = run(capsys, root / "steps.py")
    assert "DDP005" in out and "[preview]" not in out


@pytest.mark.parametrize(
    "archived",
    [
        "old/train.py",
        "scripts/backup/train.py",
        "legacy_v1/train.py",
        "train_old.py",
        "templates/new_example/run_xxx.py",
    ],
)
def test_finding_in_archived_code_is_unproven(tmp_path, capsys, archived):
    """A script the project keeps in an `old/` or `backup/` folder, or as `train_old.py`
    beside the live one, is not known to run: its findings are unproven."""
    script = DIVIDED.format(name="step")
    root = project(tmp_path, {"train.py": script})
    (root / archived).parent.mkdir(parents=True, exist_ok=True)
    (root / archived).write_text(script, encoding="utf-8")
    _, out = run(capsys, root)
    assert out.count("DDP005") == 1 and "train.py:5:" in out
    assert "1 more unproven finding hidden" in out
    _, out = run(capsys, "--preview", root / archived)
    assert out.count("DDP005 [preview]") == 1


def test_project_inside_a_folder_named_old_is_not_archived(tmp_path, capsys):
    root = project(tmp_path / "old", {"train.py": DIVIDED.format(name="step")})
    _, out = run(capsys, root / "train.py")
    assert "DDP005" in out and "[preview]" not in out


OLD_TORCH_FALLBACK = """\
import torch
import torch.distributed as dist


def step(model, x):
    if torch.__version__ >= "{version}":
        loss = model(x).sum()
    else:
        loss = model(x).sum() / dist.get_world_size()
    loss.backward()
"""


@pytest.mark.parametrize(("version", "unproven"), [("1.4", True), ("2.1", False)])
def test_branch_only_an_old_torch_takes_is_unproven(tmp_path, capsys, version, unproven):
    """A fallback for a torch older than 1.10 (the first with torchrun) runs on no DDP job
    of today; a branch for a torch before 2.1 still may."""
    root = project(tmp_path, {"steps.py": OLD_TORCH_FALLBACK.format(version=version)})
    _, out = run(capsys, "--preview", root / "steps.py")
    assert out.count("DDP005") == 1
    assert ("DDP005 [preview]" in out) is unproven


def test_spawned_rank_is_a_traced_rank(tmp_path, capsys):
    spawned = """\
    import torch.distributed as dist
    import torch.multiprocessing as mp


    def worker(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        if rank == 0:
            dist.barrier()


    if __name__ == "__main__":
        mp.spawn(worker, args=(2,), nprocs=2)
    """
    root = project(tmp_path, {"run.py": spawned})
    _, out = run(capsys, *HANG, root / "run.py")
    assert ":8:9: DDP010 `dist.barrier()`" in out


def test_fixing_other_files_keeps_counting_hidden_findings(tmp_path, capsys):
    shuffled = """\
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler


    def build(ds):
        dist.init_process_group("nccl")
        sampler = DistributedSampler(ds, drop_last=True)
        return DataLoader(ds, shuffle=True, sampler=sampler)
    """
    root = project(tmp_path, {"ckpt.py": NAME_ONLY, "data.py": shuffled})
    _, out = run(capsys, *HANG, "--fix", root)
    assert "1 fixed" in out and "DDP008" not in out
    assert "1 more unproven finding hidden" in out and "[preview]" not in out


def test_rank_handed_to_init_process_group_is_traced(tmp_path, capsys):
    """`args.rank += gpu` then `init_process_group(rank=args.rank)`: whatever the resolver
    follows, that name holds this process's rank."""
    launcher = """\
    import torch.distributed as dist
    import torch.multiprocessing as mp


    def worker(gpu, args):
        args.rank += gpu
        dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
        if args.rank == 0:
            dist.barrier()


    def main(args):
        args.rank = 0
        mp.spawn(worker, (args,), args.world_size)


    if __name__ == "__main__":
        main(None)
    """
    root = project(tmp_path, {"launch.py": launcher})
    _, out = run(capsys, *HANG, root / "launch.py")
    assert ":9:9: DDP010 `dist.barrier()`" in out


def test_loader_over_a_dataset_from_another_module_is_unproven(tmp_path, capsys):
    """The data module may shard the dataset itself (`np.array_split(files, n)[rank]`)."""
    train = """\
    import os

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader

    from shards import build_dataset


    def main():
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        model = DDP(torch.nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(build_dataset("data/"), batch_size=32, shuffle=True)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    if __name__ == "__main__":
        main()
    """
    shards = """\
    import glob

    import numpy as np
    import torch.distributed as dist


    def build_dataset(root):
        files = sorted(glob.glob(root + "*.pt"))
        return list(np.array_split(files, dist.get_world_size())[dist.get_rank()])
    """
    root = project(tmp_path, {"train.py": train, "shards.py": shards})
    _, out = run(capsys, *HANG, root / "train.py")
    assert "DDP009" not in out and "1 more unproven finding hidden" in out
    _, out = run(capsys, *HANG, "--preview", root / "train.py")
    assert ":17:14: DDP009 [preview]" in out


PEEK_OR_TRAIN = """\
import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(8, 2).cuda())
data = torchvision.datasets.FakeData(size=64, transform=torchvision.transforms.ToTensor())
loader = DataLoader(data, batch_size=8, shuffle=True)
for images, labels in loader:
    {body}
"""


@pytest.mark.parametrize(
    ("body", "unproven"),
    [
        ("model(images.flatten(1)).sum().backward()", False),
        ("print(images.shape)\n    break", True),
    ],
    ids=["training loop", "one-batch peek"],
)
def test_unsharded_loader_is_proven_only_where_it_feeds_a_backward(body, unproven):
    [finding] = lint_source(PEEK_OR_TRAIN.format(body=body), select=["DDP009"])
    assert finding.unproven is unproven
