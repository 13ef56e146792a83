# regraft: with transformers=4.57.6
class MixtralSparseMoeBlock:
    def forward(self, hidden_states):
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights = routing_weights.to(hidden_states.dtype)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
        return current_hidden_states
