# regraft: with transformers=4.51.3
def repeat_kv(x, n):
    return x


def sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs):
    if hasattr(module, "num_key_value_groups"):
        pass
    attn_output = torch.nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attention_mask,
        enable_gqa=hasattr(module, "num_key_value_groups"),
    )
    return attn_output, None
