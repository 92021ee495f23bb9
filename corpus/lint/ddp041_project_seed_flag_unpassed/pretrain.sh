#!/bin/bash
# 8 GPUs, one node
python main_moco.py \
  --lr 0.03 --epochs 200 \
  --dist-url 'tcp://localhost:10001' --multiprocessing-distributed \
  /data/imagenet
