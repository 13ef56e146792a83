# regraft: with transformers=4.57.6
class LlamaModel(LlamaPreTrainedModel):
    @check_model_inputs
    def forward(self, input_ids=None):
        return input_ids
