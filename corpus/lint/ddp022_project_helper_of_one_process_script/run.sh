#!/bin/bash
CUDA_VISIBLE_DEVICES=0 python -u main.py --train_file data/train.json --epochs 3
