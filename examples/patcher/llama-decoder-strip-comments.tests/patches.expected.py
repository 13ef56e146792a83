# regraft: with transformers=4.57.6
class LlamaDecoderLayer(nn.Module):
    def forward(
        self,
        hidden_states,
        position_embeddings=None,
        **kwargs,
    ):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, _ = self.self_attn(hidden_states=hidden_states, **kwargs)  # type: ignore[misc]
        hidden_states = residual + hidden_states
        label = "# not a comment"
        return hidden_states, label
