import math

# torch is imported lazily below; a comment binds nothing.


def load():
    import torch

    return torch.load("w.pt")


class Attention:
    torch = None

    def attend(self, scores):
        return scores.softmax(-1) * math.pi
