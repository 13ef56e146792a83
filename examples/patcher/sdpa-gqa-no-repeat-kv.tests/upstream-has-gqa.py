# regraft: with transformers=4.57.6
# regraft: unchanged
def use_gqa_in_sdpa(attention_mask, key):
    return attention_mask is None


def repeat_kv(x, n):
    return x


def sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs):
    if hasattr(module, "num_key_value_groups"):
        if not use_gqa_in_sdpa(attention_mask, key):
            key = repeat_kv(key, module.num_key_value_groups)
            value = repeat_kv(value, module.num_key_value_groups)
    attn_output = torch.nn.functional.scaled_dot_product_attention(query, key, value)
    return attn_output, None
