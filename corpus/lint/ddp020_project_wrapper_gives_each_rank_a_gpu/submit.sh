#!/bin/bash -l
#PBS -l select=2:system=polaris
export MASTER_ADDR=$(head -n 1 "$PBS_NODEFILE")
mpiexec -n 8 --ppn 4 ./gpu_affinity.sh python3 train.py
