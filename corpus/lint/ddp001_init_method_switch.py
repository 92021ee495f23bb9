"""fairseq / mmf-style switch: the process group's init method is set only for a
distributed run; without one a single process runs and may take GPU 0. A bare
`init_method` (a weight initialiser, as in Megatron) is no such switch."""

import torch
import torch.distributed as dist


class DeviceMixin:
    def configure_device(self):
        if self.config.distributed.init_method is not None:
            self.device = torch.device("cuda", self.local_rank)
            torch.cuda.set_device(self.local_rank)
        elif torch.cuda.is_available():
            self.device = torch.device("cuda")
            torch.cuda.set_device(0)
        else:
            self.device = torch.device("cpu")


def call_main(cfg, main):
    if cfg.distributed_training.distributed_init_method is None:
        return main(cfg, device=torch.device("cuda:0"))
    dist.init_process_group("nccl", init_method=cfg.distributed_training.distributed_init_method)
    return main(cfg, device=torch.device("cuda:0"))  # expect: DDP001


def build_layer(config, layer):
    if config.init_method is None:
        layer.weight.data = layer.weight.data.to("cuda:0")  # expect-preview: DDP001
    return layer
