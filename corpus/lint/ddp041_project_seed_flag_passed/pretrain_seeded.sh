#!/bin/bash
# the reproducible run of the paper's table 2
python main_moco.py \
  --lr 0.03 --epochs 200 --seed 0 \
  --dist-url 'tcp://localhost:10001' --multiprocessing-distributed \
  /data/imagenet
