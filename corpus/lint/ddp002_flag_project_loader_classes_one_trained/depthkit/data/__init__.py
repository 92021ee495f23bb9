from .base import BaseDataModule
from .mixed import MixedDepthData
from .single import SingleDepthData

__all__ = ["BaseDataModule", "MixedDepthData", "SingleDepthData"]
