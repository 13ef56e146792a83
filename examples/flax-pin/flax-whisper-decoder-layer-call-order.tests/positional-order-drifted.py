# regraft: error drift
# A fixture of the pre-fix shape, written for this example (not upstream code).
import flax.linen as nn


class FlaxWhisperDecoderLayer(nn.Module):
    def __call__(
        self,
        hidden_states,
        attention_mask,
        encoder_hidden_states=None,
        encoder_attention_mask=None,
        init_cache=False,
        output_attentions=True,
        deterministic=True,
    ):
        return (hidden_states,)


class FlaxWhisperDecoderLayerCollection(nn.Module):
    def setup(self):
        layer = nn.remat(FlaxWhisperDecoderLayer, static_argnums=(4, 5, 6))
        self.layers = [layer(self.config, name=str(i)) for i in range(self.config.decoder_layers)]

    def __call__(
        self,
        hidden_states,
        attention_mask,
        encoder_hidden_states=None,
        encoder_attention_mask=None,
        deterministic=True,
        init_cache=False,
        output_attentions=False,
    ):
        # encoder_attention_mask is left out: every later argument shifts one place left.
        for layer in self.layers:
            layer_outputs = layer(
                hidden_states,
                attention_mask,
                encoder_hidden_states,
                init_cache,
                output_attentions,
                deterministic,
            )
            hidden_states = layer_outputs[0]
        return hidden_states
