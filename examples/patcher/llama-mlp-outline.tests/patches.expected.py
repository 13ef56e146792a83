# regraft: with transformers=4.57.6
import torch
from torch import nn


@torch.compile(dynamic=True)
def LlamaMLP_forward(self, x):
    down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
    return down_proj


class LlamaMLP(nn.Module):
    def forward(self, x):
        return LlamaMLP_forward(self, x)
