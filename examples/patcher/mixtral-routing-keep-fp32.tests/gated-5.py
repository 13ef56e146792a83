# regraft: with transformers=5.25.0
# regraft: unchanged
class MixtralSparseMoeBlock:
    def forward(self, hidden_states):
        hidden_states = self.experts(hidden_states, top_k_index, top_k_weights)
        return hidden_states
