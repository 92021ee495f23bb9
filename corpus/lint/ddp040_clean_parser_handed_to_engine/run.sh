#!/bin/bash
# Semi-supervised segmentation on 8 GPUs of one node.
python -m torch.distributed.launch --nproc_per_node=8 train.py --epochs 40
