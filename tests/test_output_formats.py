"""text/concise and full (ruff's names), json (ruff's field names), SARIF 2.1.0 for code
scanning, GitHub annotations; the rule documentation URL in json and SARIF."""

from __future__ import annotations

import json
import re

import pytest
from conftest import DIVIDED_LOSS, REPO

from ddplint.output.rule_urls import rules_page
from ddplint.rule import all_rules

SHUFFLE_AND_SAMPLER = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def loaders(dataset):
\tsampler = DistributedSampler(dataset)
\treturn DataLoader(dataset, sampler=sampler, shuffle=True)
"""


def test_json_uses_ruff_field_names(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    [finding] = cli(
        "check", "--no-cache", "--select", "DDP005", "--output-format", "json", path
    ).json()
    assert {
        "code",
        "message",
        "filename",
        "location",
        "end_location",
        "fix",
        "url",
        "noqa_row",
    } <= set(finding)
    assert finding["code"] == "DDP005"
    assert finding["filename"] == str(path)
    assert finding["location"] == {"row": 9, "column": 16}
    assert finding["end_location"]["row"] == 9
    assert finding["end_location"]["column"] > 16
    assert finding["noqa_row"] == 9
    assert finding["fix"] is None


def test_json_of_clean_run_is_empty_list(cli, write):
    path = write("ok.py", "import torch.distributed as dist\n")
    result = cli("check", "--no-cache", "--output-format", "json", path)
    assert result.code == 0
    assert result.json() == []


def test_sarif_document_has_what_code_scanning_requires(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "sarif", path)
    assert result.code == 1
    document = json.loads(result.out)
    assert document["version"] == "2.1.0"
    assert document["$schema"].endswith("sarif-2.1.0.json")
    [run] = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "ddplint"
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert set(rules) == {*all_rules(), "DDP999"}  # DDP999: a file that was not checked
    for rule in rules.values():
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    [result_entry] = run["results"]
    assert result_entry["ruleId"] == "DDP005"
    assert driver["rules"][result_entry["ruleIndex"]]["id"] == "DDP005"
    assert result_entry["level"] == "error"
    location = result_entry["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.py"
    assert location["region"]["startLine"] == 9
    assert location["region"]["startColumn"] == 16
    fingerprint = result_entry["partialFingerprints"]["primaryLocationLineHash"]
    assert len(fingerprint) == 32
    # The fingerprint follows the line, not its number: moving code keeps it.
    write("train.py", "\n\n" + DIVIDED_LOSS)
    moved = json.loads(
        cli("check", "--no-cache", "--select", "DDP005", "--output-format", "sarif", path).out
    )
    assert (
        moved["runs"][0]["results"][0]["partialFingerprints"] == result_entry["partialFingerprints"]
    )


def test_github_annotations(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "github", path)
    assert result.code == 1
    [line] = result.out.splitlines()
    assert line.startswith("::error title=ddplint (DDP005),file=")
    assert ",line=9,col=16," in line
    assert "::" in line[2:] and "DDP005" in line.rsplit("::", 1)[1]


def test_concise_is_the_default_text_output(cli, monkeypatch):
    monkeypatch.chdir(REPO)
    example = "corpus/lint/example_train.py"
    default = cli("check", "--no-cache", example)
    for name in ("text", "concise"):
        named = cli("check", "--no-cache", "--output-format", name, example)
        assert (named.code, named.out, named.err) == (default.code, default.out, default.err)


def test_full_shows_the_lines_around_each_finding(cli, write, monkeypatch):
    path = write("train.py", DIVIDED_LOSS)
    monkeypatch.chdir(path.parent)
    result = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "full", "train.py")
    assert result.code == 1
    assert result.out == (
        "DDP005 Loss divided by the world size before backward(): DDP already averages "
        "gradients across ranks, so this shrinks every gradient by a factor of world_size\n"
        "  --> train.py:9:16\n"
        "   |\n"
        " 7 |     for x, y in loader:\n"
        " 8 |         loss = model(x).sum()\n"
        " 9 |         loss = loss / dist.get_world_size()\n"
        "   |                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "10 |         loss.backward()\n"
        "11 |         optimizer.step()\n"
        "   |\n"
        "\n"
        "Found 1 finding in 1 file checked.\n"
    )


def test_full_underlines_with_tabs_widened_and_names_the_fix(cli, write, monkeypatch):
    path = write("loaders.py", SHUFFLE_AND_SAMPLER)
    monkeypatch.chdir(path.parent)
    result = cli("check", "--no-cache", "--select", "DDP008", "--output-format", "full", ".")
    assert result.code == 1
    header, summary = result.out.split("\n\n", 1)
    assert header.splitlines()[1:] == [
        " --> loaders.py:7:46",
        "  |",
        "5 | def loaders(dataset):",
        "6 |     sampler = DistributedSampler(dataset)",
        "7 |     return DataLoader(dataset, sampler=sampler, shuffle=True)",
        "  | " + " " * len("    return DataLoader(dataset, sampler=sampler, ") + "^" * 12,
        "  |",
        "help: Remove `shuffle=True`",
    ]
    assert header.startswith("DDP008 [*] `shuffle=True` with `sampler=`")
    assert summary.startswith("Found 1 finding in 1 file checked.\n[*] 1 fixable")


def test_full_without_readable_source_keeps_header_and_location(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin.py").write_bytes(b"import torch.distributed as dist\nx = '\xe9'\n")
    result = cli("check", "--no-cache", "--output-format", "full", "latin.py")
    assert result.code == 1
    assert result.out.startswith(
        "DDP999 file is not valid utf-8 (byte 38: b'\\xe9'); save it as UTF-8 or declare its "
        "encoding (`# -*- coding: latin-1 -*-`)\n --> latin.py:1:1\n\nFound 1 finding"
    ), result.out


def test_statistics_accept_every_text_format(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    tables = {
        cli("check", "--no-cache", "--statistics", "--output-format", name, path).out
        for name in ("text", "concise", "full")
    }
    assert len(tables) == 1 and "DDP005" in tables.pop()


def _fake_distribution(folder, *project_urls: str) -> None:
    """Metadata of an installed `ddplint` naming `project_urls`, found before the real one."""
    info = folder / "ddplint-0.1.0.dist-info"
    info.mkdir()
    lines = ["Metadata-Version: 2.1", "Name: ddplint", "Version: 0.1.0"]
    lines += [f"Project-URL: {url}" for url in project_urls]
    (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def metadata_urls(tmp_path, monkeypatch):
    """Install fake metadata naming the given Project-URLs; forget the page found before."""

    def install(*project_urls: str) -> None:
        folder = tmp_path / f"site{len(list(tmp_path.glob('site*')))}"
        folder.mkdir()
        _fake_distribution(folder, *project_urls)
        monkeypatch.syspath_prepend(str(folder))
        rules_page.cache_clear()

    yield install
    rules_page.cache_clear()


def test_url_is_the_rules_anchor_in_the_repository(cli, write, metadata_urls):
    metadata_urls("Homepage, https://example.org", "Repository, https://github.com/o/ddplint.git")
    path = write("train.py", DIVIDED_LOSS)
    [finding] = cli(
        "check", "--no-cache", "--select", "DDP005", "--output-format", "json", path
    ).json()
    page = "https://github.com/o/ddplint/blob/main/docs/rules.md"
    assert finding["url"] == f"{page}#ddp005"
    sarif = json.loads(cli("check", "--no-cache", "--output-format", "sarif", path).out)
    help_uris = {r["id"]: r["helpUri"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert help_uris == {code: f"{page}#{code.lower()}" for code in [*all_rules(), "DDP999"]}
    # Every anchor exists: docs/rules.md has one `## CODE` heading a rule.
    headings = set(re.findall(r"^## (DDP\d+)$", (REPO / "docs/rules.md").read_text(), re.M))
    assert {url.rsplit("#", 1)[1] for url in help_uris.values()} == {h.lower() for h in headings}


def test_url_from_a_rules_label_and_none_without_metadata(cli, write, metadata_urls):
    path = write("train.py", DIVIDED_LOSS)
    metadata_urls("Rules, https://docs.example.org/ddplint/rules.html")
    [finding] = cli(
        "check", "--no-cache", "--select", "DDP005", "--output-format", "json", path
    ).json()
    assert finding["url"] == "https://docs.example.org/ddplint/rules.html#ddp005"
    metadata_urls()  # a distribution that names no URL
    [finding] = cli(
        "check", "--no-cache", "--select", "DDP005", "--output-format", "json", path
    ).json()
    assert finding["url"] is None
    sarif = json.loads(cli("check", "--no-cache", "--output-format", "sarif", path).out)
    assert all("helpUri" not in r for r in sarif["runs"][0]["tool"]["driver"]["rules"])
