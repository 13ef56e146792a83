# regraft: with transformers=4.51.3
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
class ToyPreTrainedModel(PreTrainedModel):
    supports_gradient_checkpointing = True


class ToyHead(nn.Module):
    def __init__(self, config):
        # never checkpoints anything, so it needs no flag
        self.proj = nn.Linear(config.hidden_size, 2)

    def forward(self, hidden_states):
        return self.proj(hidden_states)
