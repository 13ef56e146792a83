# regraft: with transformers=4.57.6
# regraft: error drift
# regraft: path transformers/models/whisper/modeling_whisper.py
class WhisperDecoderLayer(GradientCheckpointingLayer):
    def forward(
        self,
        hidden_states,
        encoder_hidden_states=None,
        attention_mask=None,
        encoder_attention_mask=None,
        past_key_values=None,
        use_cache=True,
    ):
        return hidden_states
