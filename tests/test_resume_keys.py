"""What a save writes and what a resume reads back, by key: the test DDP014 uses to tell
the resume file from a weights export beside it."""

from __future__ import annotations

import textwrap

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.resume_loads import keys_read
from ddplint.domain.saved_values import saved_keys


def context(source: str) -> FileContext:
    source = textwrap.dedent(source)
    return FileContext("train.py", source, cst.parse_module(source))


def saved(source: str) -> list[frozenset[str] | None]:
    ctx = context(source)
    return [saved_keys(ctx, c.args[0].value, c) for c in ctx.calls_to("torch.save")]


def read(source: str) -> list[frozenset[str]]:
    ctx = context(source)
    return [keys_read(ctx, c) for c in ctx.calls_to("torch.load")]


def test_saved_keys_of_dicts_weights_and_values_out_of_sight():
    source = """\
    import torch

    def save(model, optimizer, epoch, extra, blob):
        state = {"model": model.state_dict(), "epoch": epoch}
        state["optimizer"] = optimizer.state_dict()
        torch.save(state, "resume.pt")
        torch.save(model.state_dict(), "weights.pt")
        torch.save(model.module, "model.pt")
        torch.save(blob, "blob.pt")
        grown = {"model": model.state_dict()}
        grown.update(extra)
        torch.save(grown, "grown.pt")
        torch.save({**extra, "epoch": epoch}, "spread.pt")
        merged = {"model": model.state_dict()}
        merged |= {"run_id": extra}
        torch.save(merged, "merged.pt")
    """
    assert saved(source) == [
        frozenset({"model", "epoch", "optimizer"}),
        frozenset(),
        frozenset(),
        None,
        None,
        None,
        frozenset({"model", "run_id"}),
    ]


def test_keys_read_at_once_and_through_the_bound_name_but_not_by_get():
    source = """\
    import torch

    def resume(path, model, optimizer):
        weights = torch.load(path)["state_dict"]
        ckpt = torch.load(path)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler = ckpt.get("scaler")
        return ckpt["epoch"], weights, scaler
    """
    assert read(source) == [
        frozenset({"state_dict"}),
        frozenset({"model", "optimizer", "epoch"}),
    ]


def test_keys_read_only_on_some_runs_do_not_count_but_the_loads_own_test_does():
    source = """\
    import torch

    def resume(args, model, optimizer):
        if args.resume:
            ckpt = torch.load(args.resume)
        if args.resume:
            model.load_state_dict(ckpt["model"])
        if not args.finetune:
            optimizer.load_state_dict(ckpt["optimizer"])
    """
    assert read(source) == [frozenset({"model"})]
