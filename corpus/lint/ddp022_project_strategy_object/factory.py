"""Builds the launch strategy the training scripts use."""


def env_strategy(args):
    from strategies import EnvStrategy

    strategy = EnvStrategy(args)
    return strategy


def arg_strategy(args):
    from plain_strategies import ArgStrategy

    return ArgStrategy(args)
