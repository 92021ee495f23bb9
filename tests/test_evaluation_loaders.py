"""`Loops.serves_evaluation` / `feeds_training`: which data loaders train (DDP002, DDP003
and DDP009 rely on the one definition)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.loops import named_for, words

HEADER = """
import torch
from torch.utils.data import DataLoader, SequentialSampler
"""


def _loader(body: str) -> tuple[FileContext, cst.Call]:
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("t.py", source, cst.parse_module(source))
    (call,) = ctx.calls_to("torch.utils.data.DataLoader")
    return ctx, call


def _serves_evaluation(body: str) -> bool:
    ctx, call = _loader(body)
    parent = ctx.parent(call)
    names = [ctx.code(t.target) for t in parent.targets] if isinstance(parent, cst.Assign) else []
    return domain_of(ctx).loops.serves_evaluation(call, names, call.args[0].value, [call])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("val_loader", "evaluation"),
        ("self.valLoader", "evaluation"),
        ("testloader", "evaluation"),
        ("trainloader", "training"),
        ("dataset_train", "training"),
        ("value_loader", None),
        ("device_loader", None),
        ("loader", None),
    ],
)
def test_names(name: str, expected: str | None) -> None:
    assert named_for([name]) == expected


def test_train_wins_over_evaluation() -> None:
    assert named_for(["train_eval_loader"]) == "training"
    assert words("test_loader") == {"test", "loader"}


EVALUATION = {
    "built in an evaluation helper": """
        def prepare_eval_batches(ds):
            loader = DataLoader(ds, batch_size=8)
            return loader
    """,
    "dataset computed from the test split": """
        def build(test_split, picked):
            subset = torch.utils.data.Subset(test_split, picked)
            loader = DataLoader(subset, batch_size=8)
            return loader
    """,
    "samples read in order": """
        def build(ds, distributed):
            sampler = SequentialSampler(ds) if distributed else None
            loader = DataLoader(ds, batch_size=8, sampler=sampler)
            return loader
    """,
    "read after model.eval() in a function that does not train": """
        class Task:
            def build(self, ds):
                self.loader = DataLoader(ds, batch_size=8)

            def mine(self):
                loader = self.loader
                self.model.eval()
                return [self.model(x) for x in loader]
    """,
}

TRAINING_OR_UNKNOWN = {
    "iterated by a loop reaching backward through a helper": """
        def step(model, batch):
            model(batch).sum().backward()

        def main(ds, model):
            loader = DataLoader(ds, batch_size=8)
            model.eval()
            for batch in loader:
                step(model, batch)
    """,
    "evaluated once, also passed to a training function": """
        def fit(model, loader):
            for x in loader:
                model(x).sum().backward()

        def main(ds, model):
            loader = DataLoader(ds, batch_size=8)
            with torch.no_grad():
                print(sum(model(x).sum() for x in loader))
            fit(model, loader)
    """,
    "only returned": """
        def build(ds):
            loader = DataLoader(ds, batch_size=8)
            return loader
    """,
}


@pytest.mark.parametrize("body", EVALUATION.values(), ids=EVALUATION.keys())
def test_evaluation_loaders(body: str) -> None:
    assert _serves_evaluation(body)


@pytest.mark.parametrize("body", TRAINING_OR_UNKNOWN.values(), ids=TRAINING_OR_UNKNOWN.keys())
def test_loaders_not_known_to_evaluate(body: str) -> None:
    assert not _serves_evaluation(body)


def test_feeds_training_through_a_helper() -> None:
    helper = TRAINING_OR_UNKNOWN["iterated by a loop reaching backward through a helper"]
    ctx, call = _loader(helper)
    assert domain_of(ctx).loops.feeds_training([call])
    ctx, call = _loader(EVALUATION["read after model.eval() in a function that does not train"])
    assert not domain_of(ctx).loops.feeds_training([call])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            """
            def make(ds, is_train):
                if is_train:
                    return None
                else:
                    loader = DataLoader(ds, batch_size=8)
                return loader
            """,
            True,
        ),
        (
            """
            def make(ds, cfg):
                if not cfg.training:
                    loader = DataLoader(ds, batch_size=8)
            """,
            True,
        ),
        (
            """
            def make(ds, is_test):
                if is_test:
                    loader = DataLoader(ds, batch_size=8)
            """,
            True,
        ),
        (
            """
            def make(ds, eval):
                if eval:
                    return None
                loader = DataLoader(ds, batch_size=8)
            """,
            False,
        ),
        (
            """
            def make(ds, is_train):
                if is_train:
                    loader = DataLoader(ds, batch_size=8)
            """,
            False,
        ),
    ],
)
def test_a_loader_built_in_the_branch_for_evaluation_serves_evaluation(
    body: str, expected: bool
) -> None:
    ctx, call = _loader(body)
    assert domain_of(ctx).loops.serves_evaluation(call, [], None, [call]) is expected
