# regraft: with transformers=4.51.3
# regraft: error error
def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    """Applies rotary position embeddings."""
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)
    return q * cos, k * cos
