# regraft: with transformers=5.25.0
class WhisperDecoderLayer(GradientCheckpointingLayer):
    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        cache: EncoderDecoderCache | None = None,
        use_cache: bool | None = True,
        **kwargs: Unpack[TransformersKwargs],
    ) -> torch.Tensor:
        return hidden_states


class WhisperDecoder(WhisperPreTrainedModel):
    def forward(self, hidden_states, causal_mask, encoder_hidden_states, cache=None, use_cache=None, **kwargs):
        for idx, decoder_layer in enumerate(self.layers):
            hidden_states = decoder_layer(
                hidden_states,
                causal_mask,
                encoder_hidden_states,
                encoder_attention_mask=None,
                cache=cache if use_cache else None,
                use_cache=use_cache,
                **kwargs,
            )
        return hidden_states
