# A hand-written stand-in for transformers' modeling_whisper.py (4.57 shape), small enough to
# read: a decoder layer whose forward takes many optional parameters, and a decoder that calls
# it with keyword arguments, skipping `encoder_attention_mask`.
from typing import Optional

import torch
from torch import nn


class GradientCheckpointingLayer(nn.Module):
    pass


class WhisperDecoderLayer(GradientCheckpointingLayer):
    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        encoder_hidden_states: Optional[torch.Tensor] = None,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        layer_head_mask: Optional[torch.Tensor] = None,
        cross_attn_layer_head_mask: Optional[torch.Tensor] = None,
        past_key_values=None,
        output_attentions: Optional[bool] = False,
        use_cache: Optional[bool] = True,
        cache_position: Optional[torch.LongTensor] = None,
    ) -> torch.Tensor:
        return (hidden_states,)


class WhisperEncoder(nn.Module):
    def forward(self, hidden_states, attention_mask=None, head_mask=None):
        for idx, encoder_layer in enumerate(self.layers):
            layer_outputs = encoder_layer(
                hidden_states,
                None,
                layer_head_mask=(head_mask[idx] if head_mask is not None else None),
            )
            hidden_states = layer_outputs[0]
        return hidden_states


class WhisperDecoder(nn.Module):
    def forward(
        self,
        hidden_states,
        causal_mask=None,
        encoder_hidden_states=None,
        head_mask=None,
        cross_attn_head_mask=None,
        past_key_values=None,
        use_cache=None,
        output_attentions=False,
        cache_position=None,
    ):
        for idx, decoder_layer in enumerate(self.layers):
            if self.training:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:
                    continue

            layer_outputs = decoder_layer(
                hidden_states,
                attention_mask=causal_mask,
                encoder_hidden_states=encoder_hidden_states,
                layer_head_mask=(head_mask[idx] if head_mask is not None else None),
                cross_attn_layer_head_mask=(cross_attn_head_mask[idx] if cross_attn_head_mask is not None else None),
                past_key_values=past_key_values if use_cache else None,  # only when caching
                output_attentions=output_attentions,
                use_cache=use_cache,
                cache_position=cache_position,
            )
            hidden_states = layer_outputs[0]
        return hidden_states
