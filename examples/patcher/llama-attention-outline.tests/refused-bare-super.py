# regraft: with transformers=4.57.6
# regraft: error error
import torch
from torch import nn


class LlamaAttention(nn.Module):
    def forward(self, hidden_states, **kwargs):
        return super().forward(hidden_states)
