# regraft: with transformers=4.51.3
class LlamaModel(LlamaPreTrainedModel):
    @add_start_docstrings_to_model_forward(LLAMA_INPUTS_DOCSTRING)
    def forward(self, input_ids=None):
        return input_ids
