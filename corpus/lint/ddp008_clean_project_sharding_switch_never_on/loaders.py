"""Caption loaders: bucketed by clip length by default, or one flat shuffled loader. The
flat loader can shard with a sampler, but the only script passes `shard=False`, so its
sampler is always None and `shuffle=True` is legal."""
from torch.utils.data import DataLoader, DistributedSampler

from clips import CaptionClips, LengthBuckets


def caption_loader(cfg, bucketed=True, shard=False, replicas=1, index=0):
    clips = CaptionClips(cfg["manifest"], cfg["sample_rate"])
    if bucketed:
        return DataLoader(clips, batch_sampler=LengthBuckets(clips.durations, cfg["batch"]))
    elif shard:
        sampler = DistributedSampler(clips, num_replicas=replicas, rank=index, shuffle=True)  # expect-preview: DDP002
    else:
        sampler = None
    return DataLoader(
        clips,
        batch_size=cfg["batch"],
        sampler=sampler,
        shuffle=True,  # expect-preview: DDP008
        drop_last=True,
    )
