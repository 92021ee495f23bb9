from common.env import launcher_values


def apply_launcher_environment(args):
    """Overwrite the rank options with what the launcher exported, where it did."""
    for name, value in launcher_values().items():
        setattr(args, name, value)
