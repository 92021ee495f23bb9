#!/bin/bash
# Distributed training (4 GPUs):
# python -m torch.distributed.launch --nproc_per_node=4 --master_port=29501 train.py \
#     --epochs 90 --lr 0.1

# Single GPU
CUDA_VISIBLE_DEVICES=0 python train.py --epochs 90 --lr 0.1
