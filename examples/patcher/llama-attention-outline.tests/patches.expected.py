# regraft: with transformers=4.57.6
import torch
from torch import nn


@torch.compile(dynamic=True)
def LlamaAttention_forward(self, hidden_states, position_embeddings, attention_mask, past_key_values, **kwargs):
    attn_output = self.o_proj(hidden_states)
    return attn_output, None


class LlamaAttention(nn.Module):
    """Multi-headed attention."""

    @deprecate_kwarg("past_key_value", new_name="past_key_values", version="4.58")
    def forward(self, hidden_states, position_embeddings, attention_mask, past_key_values=None, **kwargs):
        return LlamaAttention_forward(self, hidden_states, position_embeddings, attention_mask, past_key_values, **kwargs)


class LlamaDecoderLayer(nn.Module):
    pass
