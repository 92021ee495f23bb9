"""Applies a run configuration to an object: a resumed run may carry its own rank."""


def apply_overrides(holder, cfg):
    for key in ("repeats", "use_dist"):
        if key in cfg:
            setattr(holder, key, cfg[key])
    if "rank" in cfg:
        holder.rank = cfg["rank"]
