"""A Lightning test run once on one device and once under DDP: the strategy name is the
distributed switch. The single-device side may take GPU 0; the DDP and FSDP sides start
one process per GPU, where a hard-coded GPU 0 is wrong."""

import pytest
import pytorch_lightning as pl
import torch


@pytest.mark.parametrize("strategy_name", [None, "ddp", "fsdp"])
def test_fit_once(strategy_name, tiny_module, tiny_loader):
    if strategy_name == "ddp":
        strategy = pl.strategies.DDPStrategy(accelerator="gpu")
        probe = torch.ones(2, device="cuda:0")  # expect: DDP001
    elif strategy_name == "fsdp":
        strategy = pl.strategies.FSDPStrategy(accelerator="gpu")
        probe = torch.ones(2, device="cuda:0")  # expect: DDP001
    else:
        strategy = pl.strategies.SingleDeviceStrategy(device="cuda:0")
        probe = torch.ones(2, device="cuda:0")
    trainer = pl.Trainer(strategy=strategy, max_epochs=1, devices="auto")
    trainer.fit(tiny_module, tiny_loader)
    assert probe.sum().item() == 2
    assert torch.distributed.is_available()


def run(launcher, model):
    """mmengine-style launchers: "none" runs one process, "pytorch" one per GPU."""
    if launcher == "none":
        return model.to("cuda:0")
    torch.distributed.init_process_group("nccl")
    return model.to("cuda:0")  # expect: DDP001
