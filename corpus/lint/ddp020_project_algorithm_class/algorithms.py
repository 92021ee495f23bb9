"""Algorithms hold their network; they are plain classes."""


class Consistency:
    def __init__(self, net, weight=1.0):
        self.net = net
        self.weight = weight

    def fit(self, x):
        out = self.net(x)
        return (out - out.detach().roll(1, 0)).pow(2).mean() * self.weight
