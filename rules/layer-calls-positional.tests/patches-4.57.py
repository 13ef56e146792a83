# regraft: with transformers=4.57.6
# regraft: path transformers/models/toy/modeling_toy.py
from ...modeling_layers import GradientCheckpointingLayer


class ToyDecoderLayer(GradientCheckpointingLayer):
    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, past_key_values=None, use_cache=False, **kwargs):
        return hidden_states


class ToyEncoderLayer(GradientCheckpointingLayer):
    def forward(self, hidden_states, layer_head_mask, attention_mask=None, output_attentions=False):
        return (hidden_states,)


class ToyEncoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyEncoderLayer(config) for _ in range(config.layers)])

    def forward(self, hidden_states, mask, head_mask):
        for idx, encoder_layer in enumerate(self.layers):
            # keywords in another order than the signature's
            layer_outputs = encoder_layer(
                hidden_states,
                attention_mask=mask,
                layer_head_mask=(head_mask[idx] if head_mask is not None else None),
            )
            hidden_states = layer_outputs[0]
        return hidden_states


class ToyDecoder(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList(
            [ToyDecoderLayer(config, layer_idx) for layer_idx in range(config.num_hidden_layers)]
        )
        self.norms = nn.ModuleList([nn.LayerNorm(config.hidden_size) for _ in range(2)])

    def forward(self, hidden_states, mask, encoder_hidden_states, past_key_values, use_cache):
        for decoder_layer in self.layers[: self.config.num_hidden_layers]:
            # past_key_values and use_cache stay keywords: GradientCheckpointingLayer reads them
            hidden_states = decoder_layer(
                hidden_states,
                encoder_hidden_states=encoder_hidden_states,
                attention_mask=mask,
                past_key_values=past_key_values,
                use_cache=use_cache,
            )
        for norm in self.norms:
            hidden_states = norm(hidden_states)
        return hidden_states
