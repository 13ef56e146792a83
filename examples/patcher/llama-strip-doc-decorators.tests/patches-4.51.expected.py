# regraft: with transformers=4.51.3
class LlamaModel(LlamaPreTrainedModel):
    def forward(self, input_ids=None):
        return input_ids
