# regraft: with transformers=4.51.3
# regraft: unchanged
# regraft: path transformers/models/toy/modeling_toy.py
class ToyPreTrainedModel(PreTrainedModel):
    supports_gradient_checkpointing = True


class ToyBlock(nn.Module):
    def forward(self, hidden_states, attention_mask=None):
        return (hidden_states,)


class ToyStage(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyBlock(config) for _ in range(2)])

    def forward(self, hidden_states, mask):
        # blocks of a stage, not a model's decoder/encoder layers: checkpointed (if at all) a
        # level up, so no branch is added here
        for block in self.layers:
            layer_outputs = block(hidden_states, attention_mask=mask)
            hidden_states = layer_outputs[0]
        return hidden_states
