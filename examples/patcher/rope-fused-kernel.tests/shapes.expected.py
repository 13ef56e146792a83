# regraft: with transformers=4.57.6
def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    """Each shape upstream writes, one per line pair."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_rot, q_pass = q[..., : cos.shape[-1]], q[..., cos.shape[-1] :]
    q_embed = torch.cat([_patcher_rope(q_rot, cos, sin), q_pass], dim=-1)
    k_embed = _patcher_rope(k.float(), cos, sin)
    v_embed = _patcher_rope(k, cos, sin)
    return q_embed, k_embed, v_embed
