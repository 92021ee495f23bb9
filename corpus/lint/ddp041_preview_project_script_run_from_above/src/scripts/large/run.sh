#!/bin/bash
mkdir -p log
python3 train.py --data /data/imagenet --dist-url tcp://127.0.0.1:33483 | tee -a log/train.txt
