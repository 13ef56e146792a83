# regraft: with transformers=5.25.0
class TinyForCausalLM:
    def forward(self, input_ids, labels=None, logits_to_keep=0, **kwargs):
        hidden_states = slice_logits_to_keep(self.model(input_ids).last_hidden_state, logits_to_keep)
        logits = self.lm_head(hidden_states)

        loss = None
        if labels is not None:
            loss = self.loss_function(logits=logits, labels=labels, vocab_size=self.config.vocab_size, **kwargs)
        return loss, logits
