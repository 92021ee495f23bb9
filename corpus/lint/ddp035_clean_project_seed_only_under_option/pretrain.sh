#!/bin/bash
torchrun --nproc_per_node=8 pretrain.py --data /datasets/imagenet/train --epochs 200 --batch-size 128
