"""Speech training: the dataset computes each utterance's mel features on first use and
caches them next to the audio (`<utterance>.mel.pt`), then loads them on later epochs.
The cache path is the data item's own; the distributed sampler hands each rank its own
utterances, so no two ranks write one file and no checkpoint is involved."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchaudio
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Utterances(Dataset):
    def __init__(self, manifest):
        with open(manifest) as f:
            self.items = [line.split("|") for line in f.read().splitlines()]
        self.mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_mels=80)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        wav_path, label = self.items[index]
        return self.load_features(wav_path), int(label)

    def load_features(self, wav_path):
        mel_path = wav_path.replace(".wav", ".mel.pt")
        if os.path.exists(mel_path):
            return torch.load(mel_path)
        audio, _ = torchaudio.load(wav_path)
        mel = self.mel(audio).squeeze(0)
        torch.save(mel, mel_path)
        return mel


class SpeakerUtterances(Utterances):
    def __init__(self, manifest, speakers):
        super().__init__(manifest)
        self.speakers = {name: i for i, name in enumerate(speakers)}

    def __getitem__(self, index):
        wav_path, speaker = self.items[index]
        return self.load_features(wav_path), self.speakers[speaker]


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = Utterances("train.txt")
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    model = DDP(nn.GRU(80, 128, batch_first=True).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for mel, _ in loader:
            output, _ = model(mel.transpose(1, 2).cuda())
            loss = output.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
