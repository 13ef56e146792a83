# regraft: with transformers=4.57.6
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
class ToyDecoderLayer(GradientCheckpointingLayer):
    def forward(self, hidden_states, attention_mask=None):
        return hidden_states


class ToyDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        self.adapters = [ToyDecoderLayer(config)]

    def forward(self, hidden_states, mask):
        # the loop walks a plain list, not the ModuleList the class built: not a layer loop
        for adapter in self.adapters:
            hidden_states = adapter(hidden_states, attention_mask=mask)
        return hidden_states
