# regraft: with transformers=4.51.3
# regraft: unchanged
# regraft: path transformers/modeling_layers.py
class Unrelated:
    pass
