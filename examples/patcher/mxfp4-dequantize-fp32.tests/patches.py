# regraft: path transformers/integrations/mxfp4.py
import torch


def dequantize(module, param_name, param_value, target_device, **kwargs):
    for proj in ["gate_up_proj", "down_proj"]:
        if hasattr(module, f"{proj}_blocks"):
            dequantized = convert_moe_packed_tensors(getattr(module, f"{proj}_blocks"), getattr(module, f"{proj}_scales"))
            setattr(module, proj, torch.nn.Parameter(dequantized.to(target_device)))


def dequantize_convertops(blocks, scales, target_device):
    dequantized = convert_moe_packed_tensors(blocks, scales)
    return torch.nn.Parameter(dequantized.to(target_device))
