"""DDP027 on `datasets` shuffles: an unseeded `.shuffle()` of a map-style Hugging Face
dataset that every process runs, in a job that shards rows by index, is reported; a
seeded one, one rank's, a streaming one, one of an object of unknown kind, one in a
script that shards nothing, or one after NumPy's generator is seeded alike (its seed
comes from there) is not."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source

SCRIPT = """\
import os
import random
import numpy as np
import torch.distributed as dist
from datasets import load_dataset
from transformers import Trainer, TrainingArguments, set_seed
from utils import seed_everything

def main(model, path, data=None):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    raw = load_dataset("json", data_files=path{load_args})
{body}
    trainer = Trainer(model=model, args=TrainingArguments("out"), train_dataset=train_data)
    trainer.train()
"""


def lines(body: str, load_args: str = "", sharder: str | None = None) -> list[int]:
    source = SCRIPT.format(body=body, load_args=load_args)
    if sharder is not None:
        source = source.replace(
            '    trainer = Trainer(model=model, args=TrainingArguments("out"), '
            "train_dataset=train_data)\n    trainer.train()\n",
            sharder,
        )
    return [d.start.row for d in lint_source(source, select=["DDP027"]) if not d.unproven]


def test_an_unseeded_shuffle_through_splits_and_methods_is_reported_where_it_is():
    body = (
        '    split = raw["train"].train_test_split(test_size=100, seed=1)\n'
        '    train_data = split["train"].shuffle().map(len)'
    )
    assert lines(body) == [13]


def test_the_message_says_what_differs_between_one_and_n_processes():
    body = '    train_data = raw["train"].shuffle()'
    source = SCRIPT.format(body=body, load_args="")
    (finding,) = lint_source(source, select=["DDP027"])
    assert "NumPy's global generator" in finding.message
    assert "fresh OS entropy" in finding.message
    assert "25% with 2 processes" in finding.message
    assert "on one process every row is used once" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        '    train_data = raw["train"].shuffle(seed=42)',
        '    train_data = raw["train"].shuffle(42)',
        '    train_data = raw["train"]\n'
        "    if dist.get_rank() == 0:\n"
        '        raw["train"].shuffle()',
        "    train_data = data.shuffle()",
        "    names = os.listdir(path)\n    random.shuffle(names)\n    train_data = raw",
        '    np.random.seed(42)\n    train_data = raw["train"].shuffle()',
        '    set_seed(42)\n    train_data = raw["train"].shuffle()',
        '    seed_everything(42)\n    train_data = raw["train"].shuffle()',
        '    early = Trainer(model=model)\n    train_data = raw["train"].shuffle()',
    ],
    ids=[
        "seed-keyword",
        "seed-positional",
        "rank-zero",
        "unknown-object",
        "list",
        "numpy-seeded",
        "library-seeded",
        "seeding-helper",
        "trainer-before",
    ],
)
def test_shuffles_that_cannot_disagree_or_are_not_proven_datasets_are_silent(body: str):
    assert lines(body) == []


def test_a_streaming_dataset_is_not_a_map_style_one():
    body = '    train_data = raw["train"].shuffle()'
    assert lines(body, load_args=", streaming=True") == []


def test_a_script_that_shards_nothing_by_index_is_silent():
    body = '    train_data = raw["train"].shuffle()'
    no_sharding = "    dist.init_process_group('nccl')\n    model.fit(train_data)\n"
    assert lines(body, sharder=no_sharding) == []
