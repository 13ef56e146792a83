# regraft: with transformers=4.57.6
# regraft: path transformers/models/modernbert/modeling_modernbert.py
class ModernBertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.drop = nn.Dropout(config.embedding_dropout)

    @torch._dynamo.disable
    def compiled_embeddings(self, input_ids: torch.LongTensor) -> torch.Tensor:
        return self.drop(self.norm(self.tok_embeddings(input_ids)))

    def forward(self, input_ids=None, inputs_embeds=None):
        return self.compiled_embeddings(input_ids)
