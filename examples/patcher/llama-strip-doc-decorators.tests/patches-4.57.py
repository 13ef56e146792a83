# regraft: with transformers=4.57.6
@auto_docstring
class LlamaModel(LlamaPreTrainedModel):
    @check_model_inputs
    @auto_docstring
    def forward(self, input_ids=None):
        return input_ids
