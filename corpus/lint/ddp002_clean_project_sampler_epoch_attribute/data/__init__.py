from .frames import FramePairs, FrameLoader
