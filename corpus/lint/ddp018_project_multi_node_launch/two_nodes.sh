#!/bin/bash
# Run on each of the two machines with NODE_RANK=0 and NODE_RANK=1.
torchrun --nnodes=2 --nproc_per_node=8 --node_rank="$NODE_RANK" \
    --master_addr="$MASTER_ADDR" --master_port=29500 pretrain.py
