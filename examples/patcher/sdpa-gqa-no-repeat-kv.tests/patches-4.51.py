# regraft: with transformers=4.51.3
def repeat_kv(x, n):
    return x


def sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs):
    if hasattr(module, "num_key_value_groups"):
        key = repeat_kv(key, module.num_key_value_groups)
        value = repeat_kv(value, module.num_key_value_groups)
    attn_output = torch.nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attention_mask,
    )
    return attn_output, None
