#!/bin/bash
# Four GPUs on one node.
python -m torch.distributed.launch --nproc_per_node=4 --master_port 29511 \
    train.py --epochs 40 --lr 0.05
