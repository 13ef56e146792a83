# regraft: with transformers=4.57.6
# regraft: error drift
def apply_rotary_pos_emb(q, k, cos, sin):
    q_embed = (q * cos) + (rotate_pairwise(q) * sin)
    return q_embed
