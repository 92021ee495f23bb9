"""ResNet-50 on WebFace: resumes from its own run folder."""

from configs.base import config

config.output = "work_dirs/r50_webface"
config.epochs = 24
config.resume = True
