"""Tests of `local_device()`, which picks each process's GPU from LOCAL_RANK. The devices
in the assertions are expected values, not devices any process puts tensors on. The last
test runs on every rank of a torchrun job and puts each rank's tensor on GPU 0."""

import os

import torch
import torch.distributed as dist


def local_device():
    return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))


def test_local_rank_picks_its_gpu(monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert local_device() == torch.device("cuda:3")
    assert torch.device("cuda:3") in [local_device()]


def test_rank_default_is_first_gpu(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    torch.testing.assert_close(torch.tensor(local_device().index), torch.tensor(0))
    assert local_device() != torch.device("cuda", 1)


def test_all_reduce_on_every_rank():
    dist.init_process_group("nccl")
    ones = torch.ones(4, device=torch.device("cuda:0"))  # expect: DDP001
    dist.all_reduce(ones)
    assert ones.sum().item() == 4 * dist.get_world_size()
    dist.destroy_process_group()
