"""Waveform segments for vocoder training, cut at a random offset with `random`."""

import random

import torch
import torchaudio


class SegmentDataset(torch.utils.data.Dataset):
    def __init__(self, files, segment, sample_rate=22050):
        self.files = files
        self.segment = segment
        self.sample_rate = sample_rate
        random.seed(1234)
        random.shuffle(self.files)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        audio, rate = torchaudio.load(self.files[index])
        if rate != self.sample_rate:
            audio = torchaudio.functional.resample(audio, rate, self.sample_rate)
        if audio.size(1) >= self.segment:
            start = random.randint(0, audio.size(1) - self.segment)
            audio = audio[:, start : start + self.segment]
        else:
            audio = torch.nn.functional.pad(audio, (0, self.segment - audio.size(1)))
        return audio
