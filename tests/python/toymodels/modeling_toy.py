"""Toy layers and a model that calls them with keywords, as transformers models do."""

SCALE = 2


class ToyLayer:
    calls = []

    def __call__(self, *args, **kwargs):
        # what a checkpoint wrapper sees: the positionals and keywords it was handed
        ToyLayer.calls.append((len(args), sorted(kwargs)))
        return self.forward(*args, **kwargs)

    def forward(self, hidden, mask=None, bias=None):
        return hidden + (mask or 0) * 10 + (bias or 0) * 100


class ToyModel:
    def __init__(self, n=2):
        self.layers = [ToyLayer() for _ in range(n)]

    def forward(self, x, m, b):
        for layer in self.layers:
            x = layer(x, bias=b, mask=m)
        return x

    def fails(self, x):
        value = x + 1
        raise ValueError("boom")


def helper(x, scale=SCALE, *, offset=1):
    return x * scale + offset


def make_counter(start):
    count = [start]

    def step():
        count[0] += 1
        return count[0]

    return step
