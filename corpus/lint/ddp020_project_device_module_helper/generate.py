"""Tensor-parallel generation: `devices.resolve_device` sets this rank's device, so the
bare "cuda" of the attention mask is this rank's GPU."""

import torch
import torch.distributed as dist

import devices


class Generator:
    def __init__(self, model, device_name):
        self.device = devices.resolve_device(device_name)
        dist.init_process_group("nccl")
        self.model = model.to(self.device)

    def step(self, tokens):
        mask = torch.ones(tokens.shape[-1], tokens.shape[-1], device="cuda").tril()
        return self.model(tokens.to(self.device), mask=mask)
