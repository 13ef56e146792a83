# regraft: with transformers=4.57.6
# regraft: error drift
def eager_attention_forward(module, query, key, value, attention_mask):
    attn_weights = nn.functional.softmax(attn_weights * 2, dim=-1)
    attn_weights = nn.functional.softmax(attn_weights, dim=axis)
    return attn_weights
