# regraft: with transformers=4.57.6
def eager_attention_forward(module, query, key, value, attention_mask):
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(attn_weights.dtype)
    return attn_weights


class GPT2Attention:
    def _upcast_and_reordered_attn(self, query, key, value):
        attn_weights = query @ key
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(attn_weights.dtype)
        return attn_weights
