# regraft: with transformers=4.57.6
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
class ToyDecoderLayer(GradientCheckpointingLayer):
    def forward(self, hidden_states, attention_mask=None):
        return hidden_states


class OtherLayer(GradientCheckpointingLayer):
    def forward(self, attention_mask, hidden_states=None):
        return hidden_states


class ToyDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        # the list may now hold another class: its calls cannot be bound to ToyDecoderLayer's
        self.layers[0] = OtherLayer(config)

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states
