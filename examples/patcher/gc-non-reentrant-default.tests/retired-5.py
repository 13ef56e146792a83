# regraft: with transformers=5.25.0
# regraft: unchanged
class PreTrainedModel:
    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        if gradient_checkpointing_kwargs is None:
            gradient_checkpointing_kwargs = {"use_reentrant": True}
        return gradient_checkpointing_kwargs
