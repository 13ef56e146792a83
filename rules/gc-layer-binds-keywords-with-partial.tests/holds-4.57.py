# regraft: with transformers=4.57.6
# regraft: unchanged
# regraft: path transformers/modeling_layers.py
class GradientCheckpointingLayer(nn.Module):
    gradient_checkpointing = False

    def __call__(self, *args, **kwargs):
        if self.gradient_checkpointing and self.training:
            if "use_cache" in kwargs and kwargs["use_cache"]:
                kwargs["use_cache"] = False
            if "past_key_values" in kwargs and kwargs["past_key_values"] is not None:
                kwargs["past_key_values"] = None
            return self._gradient_checkpointing_func(partial(super().__call__, **kwargs), *args)
        return super().__call__(*args, **kwargs)
