"""`--fix`, `--unsafe-fixes`, `--diff` and `--show-fixes` on real files."""

from __future__ import annotations

from conftest import UNWRAPPED_SAVE


def test_fix_rewrites_file_and_second_fix_changes_nothing(cli, write):
    path = write("train.py", UNWRAPPED_SAVE)
    result = cli("check", "--no-cache", "--select", "DDP006", "--fix", "--show-fixes", path)
    assert result.code == 0, result.out
    assert "Fixed 1 finding" in result.out
    fixed = path.read_text()
    assert "model.module.state_dict()" in fixed
    assert fixed.replace("model.module.state_dict()", "model.state_dict()") == UNWRAPPED_SAVE
    again = cli("check", "--no-cache", "--select", "DDP006", "--fix", path)
    assert again.code == 0
    assert path.read_text() == fixed


def test_diff_shows_and_does_not_write(cli, write):
    path = write("train.py", UNWRAPPED_SAVE)
    result = cli("check", "--no-cache", "--select", "DDP006", "--diff", path)
    assert result.code == 1
    assert "-    torch.save(model.state_dict()" in result.out
    assert "+    torch.save(model.module.state_dict()" in result.out
    assert path.read_text() == UNWRAPPED_SAVE


def test_fixable_marker_and_json_edits(cli, write):
    path = write("train.py", UNWRAPPED_SAVE)
    text = cli("check", "--no-cache", "--select", "DDP006", path)
    assert "DDP006 [*]" in text.out
    assert "[*] 1 fixable with the `--fix` option." in text.out
    [finding] = cli(
        "check", "--no-cache", "--select", "DDP006", "--output-format", "json", path
    ).json()
    assert finding["fix"]["applicability"] == "safe"
    [edit] = finding["fix"]["edits"]
    assert edit["content"] == "model.module.state_dict()" or ".module" in edit["content"]


def test_unsafe_fix_needs_the_flag(cli, write):
    source = (
        "import os\nimport torch\nimport torch.distributed as dist\n"
        "dist.init_process_group('nccl')\n"
        "local_rank = int(os.environ['LOCAL_RANK'])\n"
        "torch.cuda.set_device(local_rank)\n"
        "x = torch.zeros(3).to('cuda:0')\n"
    )
    path = write("train.py", source)
    safe_only = cli("check", "--no-cache", "--select", "DDP001", "--fix", path)
    assert safe_only.code == 1
    assert path.read_text() == source
    assert "hidden fix" in safe_only.out
    unsafe = cli("check", "--no-cache", "--select", "DDP001", "--fix", "--unsafe-fixes", path)
    assert unsafe.code == 0, unsafe.out
    assert "cuda:0" not in path.read_text()
    assert "local_rank" in path.read_text().splitlines()[-1]
