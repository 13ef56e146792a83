import math


def attend(scores):
    return scores.softmax(-1) * math.pi
