# regraft: with transformers=4.57.6
class TinyForCausalLM:
    def forward(self, input_ids, labels=None, logits_to_keep=0, **kwargs):
        hidden_states = self.model(input_ids)[0]
        slice_indices = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        logits = self.lm_head(hidden_states[:, slice_indices, :])
        logits = logits / self.config.logits_scaling  # the scaled shape

        loss = None
        if labels is not None:
            loss = _patcher_fused_linear_ce(hidden_states[:, slice_indices, :], self.lm_head.weight, labels, logit_scale=1 / getattr(self.config, "logits_scaling", 1.0), **kwargs)
        return loss, logits
