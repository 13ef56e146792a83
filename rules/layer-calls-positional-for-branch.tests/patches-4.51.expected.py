# regraft: with transformers=4.51.3
# regraft: path transformers/models/starcoder2/modeling_starcoder2.py
class Starcoder2PreTrainedModel(PreTrainedModel):
    supports_gradient_checkpointing = True


class Starcoder2DecoderLayer(nn.Module):
    def forward(
        self,
        hidden_states,
        attention_mask=None,
        position_ids=None,
        past_key_value=None,
        output_attentions=False,
        use_cache=False,
        cache_position=None,
        position_embeddings=None,
        **kwargs,
    ):
        return (hidden_states,)


class Starcoder2Model(Starcoder2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.layers = nn.ModuleList([Starcoder2DecoderLayer(config, i) for i in range(config.num_hidden_layers)])
        self.gradient_checkpointing = False

    def forward(self, hidden_states, causal_mask, position_ids, past_key_values, output_attentions, use_cache, cache_position, position_embeddings, **flash_attn_kwargs):
        for decoder_layer in self.layers[: self.config.num_hidden_layers]:
            if self.gradient_checkpointing and self.training:
                layer_outputs = self._gradient_checkpointing_func(
                    decoder_layer.__call__,
                    hidden_states,
                    causal_mask,
                    position_ids,
                    past_key_values,
                    output_attentions,
                    use_cache,
                    cache_position,
                    position_embeddings,
                    **flash_attn_kwargs
                )
            else:
                layer_outputs = decoder_layer(
                    hidden_states,
                    causal_mask,
                    position_ids,
                    past_key_values,
                    output_attentions,
                    use_cache,
                    cache_position,
                    position_embeddings,
                    **flash_attn_kwargs,
                )
            hidden_states = layer_outputs[0]
        return hidden_states
