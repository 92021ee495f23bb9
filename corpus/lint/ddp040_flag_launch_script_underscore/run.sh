#!/bin/bash
# Train on one node with 4 GPUs.
export OMP_NUM_THREADS=4
python -m torch.distributed.launch --nproc_per_node=4 --master_port=29501 train.py \
    --epochs 90 \
    --lr 0.1
