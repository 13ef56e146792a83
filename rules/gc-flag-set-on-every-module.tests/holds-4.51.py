# regraft: with transformers=4.51.3
# regraft: unchanged
# regraft: path transformers/modeling_utils.py
class PreTrainedModel(nn.Module):
    def _set_gradient_checkpointing(self, enable=True, gradient_checkpointing_func=checkpoint):
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing"):
                module._gradient_checkpointing_func = gradient_checkpointing_func
                module.gradient_checkpointing = enable
