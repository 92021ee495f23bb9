"""The progressive-resolution schedule: which image size and batch size each stage of
training uses, looked up by the global step."""

STAGES = [
    {"until": 20000, "img_size": 32, "batch_size": 64, "lr": 2e-4, "drift": 1e-3},
    {"until": 60000, "img_size": 64, "batch_size": 32, "lr": 1e-4, "drift": 1e-3},
    {"until": None, "img_size": 128, "batch_size": 16, "lr": 5e-5, "drift": 5e-4},
]


def stage_at(step):
    for stage in STAGES:
        if stage["until"] is None or step < stage["until"]:
            return dict(stage)
    return dict(STAGES[-1])
