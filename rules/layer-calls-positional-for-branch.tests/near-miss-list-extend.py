# regraft: with transformers=4.51.3
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
class ToyPreTrainedModel(PreTrainedModel):
    supports_gradient_checkpointing = True


class ToyDecoderLayer(nn.Module):
    def forward(self, hidden_states, attention_mask=None):
        return hidden_states


class OtherLayer(nn.Module):
    def forward(self, attention_mask, hidden_states=None):
        return hidden_states


class ToyDecoder(ToyPreTrainedModel):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config) for _ in range(2)])
        # the list may now hold another class: its calls cannot be bound to ToyDecoderLayer's
        self.layers.extend([OtherLayer(config)])

    def forward(self, hidden_states, mask):
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=mask)
        return hidden_states
