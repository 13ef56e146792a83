# regraft: with transformers=4.57.6
class TinyForCausalLM:
    def forward(self, input_ids, labels=None, logits_to_keep=0, **kwargs):
        hidden_states = self.model(input_ids).last_hidden_state
        slice_indices = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        logits = self.lm_head(hidden_states[:, slice_indices, :])

        loss = None
        if labels is not None:
            loss = self.loss_function(
                logits=logits, labels=labels, vocab_size=self.config.vocab_size, **kwargs
            )
        return loss, logits
