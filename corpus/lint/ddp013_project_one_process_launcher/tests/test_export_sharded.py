"""The twin of `test_export.py`: the same workers in a job of two tensor-parallel ranks
(also through a parametrization with a row of two), so both ranks write the one file and
both download the tokenizer."""
import pytest
import torch
import torch.distributed as dist
from transformers import AutoTokenizer

from testkit.launch import with_parallel_job


def _export(out_path):
    model = torch.nn.Linear(4, 4)
    dist.barrier()
    torch.save(model.state_dict(), out_path)  # expect-preview: DDP013


def _tokenize(out_path):
    dist.barrier()
    tokenizer = AutoTokenizer.from_pretrained("gpt2")  # expect-preview: DDP025
    torch.save(tokenizer("hello")["input_ids"], out_path)  # expect-preview: DDP013


def test_export(tmp_path):
    with_parallel_job(tp=2, dp=1, pp=1)(_export)(out_path=tmp_path / "model.pt")


@pytest.mark.parametrize("tp,dp,pp", [(1, 1, 1), (2, 1, 1)])
def test_tokenize(tmp_path, tp, dp, pp):
    with_parallel_job(tp=tp, dp=dp, pp=pp)(_tokenize)(out_path=tmp_path / "ids.pt")
