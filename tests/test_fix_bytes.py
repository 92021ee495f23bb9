"""`--fix` writes back exactly the bytes it read outside the edited spans: the declared
encoding (coding cookie), a UTF-8 BOM and the line endings (lines it adds to a CRLF file end
in CRLF)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddplint.cli import main

TEMPLATE = """\
{cookie}import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

# {comment}
GREETING = "{text}"


def main(net, dataset, epochs):
    dist.init_process_group("nccl")
    model = DDP(net)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, sampler=sampler)
    for epoch in range(epochs):  # {comment}
        for x in loader:
            model(x).sum().backward()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "m.pt")  # {text}
"""
SAVE_BEFORE, SAVE_AFTER = b"model.state_dict()", b"model.module.state_dict()"
INSERTED = b"        sampler.set_epoch(epoch)"
# Characters that str.splitlines() breaks lines on but Python and LibCST do not (form feed,
# NEL, line separator...), besides accents, CJK and astral characters.
LATIN = "abc xyz\t\x0c\x1c\x85\xa0\xe9\xdf\xff"
WIDE = LATIN + "\u2028\u4e2d\U0001f600"
ENCODINGS = {
    "utf-8": ("", "utf-8", WIDE),
    "utf-8-bom": ("", "utf-8-sig", WIDE),
    "latin-1": ("# -*- coding: latin-1 -*-\n", "latin-1", LATIN),
    "cp1252-cookie": ("# vim: set fileencoding=cp1252 :\n", "cp1252", "abc \xe9\xdf\xff"),
}


@st.composite
def files(draw: st.DrawFn) -> tuple[bytes, str, bytes]:
    name = draw(st.sampled_from(sorted(ENCODINGS)))
    cookie, codec, alphabet = ENCODINGS[name]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    comment = draw(st.text(alphabet, max_size=12))
    text = draw(st.text(alphabet.replace("\x0c", "").replace("\x1c", ""), max_size=12))
    source = TEMPLATE.format(cookie=cookie, comment=comment, text=text)
    data = source.replace("\n", newline).encode(codec)
    return data, codec, newline.encode()


def fix_file(path: Path) -> int:
    return main(["check", "--no-cache", "--select", "DDP002,DDP006", "--fix", str(path)])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files())
def test_fix_then_revert_gives_the_original_bytes(tmp_path, capsys, example):
    original, codec, newline = example
    path = tmp_path / "train.py"
    path.write_bytes(original)
    assert fix_file(path) == 0, capsys.readouterr()
    capsys.readouterr()
    fixed = path.read_bytes()
    assert SAVE_AFTER in fixed
    assert INSERTED + newline in fixed, "the added line ends like the file's lines"
    reverted = fixed.replace(SAVE_AFTER, SAVE_BEFORE).replace(INSERTED + newline, b"", 1)
    assert reverted == original
    fixed.decode(codec)


def test_latin1_file_keeps_its_encoding(tmp_path, capsys):
    original = TEMPLATE.format(
        cookie="# -*- coding: latin-1 -*-\n", comment="caf\xe9", text="caf\xe9"
    ).encode("latin-1")
    path = tmp_path / "train.py"
    path.write_bytes(original)
    assert fix_file(path) == 0, capsys.readouterr()
    fixed = path.read_bytes()
    assert b'"caf\xe9"' in fixed and "café".encode() not in fixed


def test_bom_is_kept(tmp_path, capsys):
    original = b"\xef\xbb\xbf" + TEMPLATE.format(cookie="", comment="", text="").encode()
    path = tmp_path / "train.py"
    path.write_bytes(original)
    assert fix_file(path) == 0, capsys.readouterr()
    assert path.read_bytes().startswith(b"\xef\xbb\xbfimport torch\n")


def test_crlf_file_gets_crlf_lines(tmp_path, capsys):
    original = TEMPLATE.format(cookie="", comment="", text="").replace("\n", "\r\n").encode()
    path = tmp_path / "train.py"
    path.write_bytes(original)
    assert fix_file(path) == 0, capsys.readouterr()
    fixed = path.read_bytes()
    assert fixed.count(b"\r\n") == fixed.count(b"\n") == original.count(b"\n") + 1


def test_api_fix_source_keeps_crlf():
    from ddplint.api import fix_source

    source = TEMPLATE.format(cookie="", comment="", text="").replace("\n", "\r\n")
    fixed = fix_source(source, select=["DDP002", "DDP006"])
    assert fixed.count("\r\n") == fixed.count("\n") == source.count("\n") + 1
