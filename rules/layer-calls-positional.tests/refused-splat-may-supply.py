# regraft: with transformers=4.57.6
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
class ToyDecoderLayer(GradientCheckpointingLayer):
    def forward(self, hidden_states, attention_mask=None, cross_states=None, position_ids=None, **kwargs):
        return hidden_states


class ToyDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])

    def forward(self, hidden_states, mask, position_ids, **kwargs):
        for layer in self.layers:
            # `cross_states` would be skipped (filled with None), but **kwargs may supply it:
            # refused, reported under on_refuse: warn, and the file is left as it is
            hidden_states = layer(hidden_states, attention_mask=mask, position_ids=position_ids, **kwargs)
        return hidden_states
