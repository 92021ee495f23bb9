#!/bin/bash
# one GPU, seeded: the runs of the paper's table
python distill.py --gpu 0 --seed 0 --epochs 240 /data/cifar100
python distill.py --gpu 0 --seed 1 --epochs 240 /data/cifar100
