#!/bin/bash
set -e
python -m torch.distributed.launch --nproc_per_node=8 \
    pretrain.py \
    --epochs 100 \
    --batch-size 128
