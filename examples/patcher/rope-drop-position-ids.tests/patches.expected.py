# regraft: with transformers=4.57.6
def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Applies rotary position embeddings.

    Args:
        q (`torch.Tensor`): The query tensor.
        unsqueeze_dim (`int`, *optional*, defaults to 1):
            The dimension to unsqueeze.
    """
    cos = cos.unsqueeze(unsqueeze_dim)
    return q * cos, k * cos
