# regraft: with transformers=4.57.6
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
# Each decoder's list may also hold another class (appended, extended, inserted, added, an
# item assigned, set by setattr): its calls cannot be bound to ToyDecoderLayer's signature.
class ToyDecoderLayer(GradientCheckpointingLayer):
    def forward(self, hidden_states, attention_mask=None):
        return hidden_states


class OtherLayer(GradientCheckpointingLayer):
    def forward(self, attention_mask, hidden_states=None):
        return hidden_states


class AppendDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        self.layers.append(OtherLayer(config))

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states


class ExtendDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        self.layers.extend([OtherLayer(config)])

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states


class InsertDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        self.layers.insert(0, OtherLayer(config))

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states


class AugmentedDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        self.layers += [OtherLayer(config)]

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states


class ItemDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        self.layers[0] = OtherLayer(config)

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states


class SetattrDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        setattr(self, "layers", nn.ModuleList([OtherLayer(config)]))

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states
