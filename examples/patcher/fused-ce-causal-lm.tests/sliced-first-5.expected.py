# regraft: with transformers=5.25.0
class TinyForCausalLM:
    def forward(self, input_ids, labels=None, logits_to_keep=0, **kwargs):
        hidden_states = slice_logits_to_keep(self.model(input_ids).last_hidden_state, logits_to_keep)
        logits = self.lm_head(hidden_states)

        loss = None
        if labels is not None:
            loss = _patcher_fused_linear_ce(hidden_states, self.lm_head.weight, labels, logit_scale=1 / getattr(self.config, "logits_scaling", 1.0), **kwargs)
        return loss, logits
