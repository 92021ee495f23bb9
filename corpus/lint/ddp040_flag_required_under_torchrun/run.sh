#!/bin/bash
# Fine-tune on one node.
torchrun --standalone --nproc_per_node=4 train.py --epochs 30 --lr 0.01
