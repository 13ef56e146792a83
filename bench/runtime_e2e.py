"""One training step of a tiny Whisper with a reentrant checkpoint: stock, then patched."""

import time

import torch
import transformers
from transformers import WhisperConfig, WhisperForConditionalGeneration
import transformers.models.whisper.modeling_whisper as mw

import regraft

torch.manual_seed(0)
config = WhisperConfig(
    vocab_size=64, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
    num_mel_bins=8, max_source_positions=16, max_target_positions=16,
    pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
)
model = WhisperForConditionalGeneration(config)
features = torch.randn(2, config.num_mel_bins, 2 * config.max_source_positions)
labels = torch.randint(3, config.vocab_size, (2, 6))


def step(m):
    m.zero_grad(set_to_none=True)
    m.train()
    out = m(input_features=features, labels=labels, use_cache=False)
    out.loss.backward()
    return {n: p.grad.detach().clone() for n, p in m.named_parameters() if p.grad is not None}


print(f"torch {torch.__version__}, transformers {transformers.__version__}, regraft {regraft.__version__}")
reference = step(model)
print(f"reference (no checkpointing): {len(reference)} parameters with gradients")

model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
try:
    step(model)
    print("stock model with a reentrant checkpoint: trained (unexpected)")
except RuntimeError as error:
    print(f"stock model with a reentrant checkpoint fails: {str(error).splitlines()[0]}")

rules = regraft.Rules.load("rules")
started = time.perf_counter()
handle = regraft.patch(mw.WhisperDecoder, rules, versions={"transformers": transformers.__version__})
print(f"regraft.patch(WhisperDecoder): rules {handle.rules} in {1000 * (time.perf_counter() - started):.1f} ms")
patched = step(model)
worst = max((patched[n] - g).abs().max().item() for n, g in reference.items())
missing = sorted(set(reference) - set(patched))
print(f"patched model with a reentrant checkpoint: {len(patched)} parameters with gradients, "
      f"max |grad - reference| over all parameters = {worst:.3g}" + (f", missing {missing}" if missing else ""))
assert not missing and worst <= 1e-6, "gradients differ"
handle.revert()
print("reverted: WhisperDecoder.forward has its original code again")
