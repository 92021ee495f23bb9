"""json (ruff's field names), SARIF 2.1.0 for code scanning, GitHub annotations."""

from __future__ import annotations

import json

from conftest import DIVIDED_LOSS

from ddplint.rule import all_rules


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
