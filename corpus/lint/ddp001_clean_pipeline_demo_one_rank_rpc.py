"""Pipeline-parallel demo run as one plain script: the RPC world it starts has one rank
(`world_size=1`), and the two stages sit on GPU 0 and GPU 1 on purpose. No second
process exists to share a GPU with."""
import os

import torch
import torch.nn as nn
from torch.distributed import rpc
from torch.distributed.pipeline.sync import Pipe

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
rpc.init_rpc("stage_driver", rank=0, world_size=1)

encoder = nn.Sequential(nn.Linear(512, 1024), nn.GELU()).to("cuda:0")
head = nn.Sequential(nn.Linear(1024, 10)).to("cuda:1")
pipeline = Pipe(nn.Sequential(encoder, head), chunks=4)

batch = torch.randn(64, 512, device="cuda:0")
logits = pipeline(batch).local_value()
print(logits.shape, logits.device)
rpc.shutdown()
