"""The patcher port at import time: install the rules, import transformers, and show what
changed. Run with transformers and torch installed (`bench/patcher-e2e.sh` makes such a venv):

    python examples/patcher/driver.py [--train]

Every module of transformers that a rule selects is patched from source as it is imported
(regraft's import hook; modules no rule selects load from their bytecode as usual). A drift
is a warning naming the rule, never a silently unpatched import. With `--train`, a tiny
randomly initialised Llama runs one training step, compiled parts disabled so it runs on any
CPU, and its loss and gradients are compared with the unpatched model's (run in a child
interpreter without the hook).
"""

import argparse
import inspect
import json
import pathlib
import subprocess
import sys
import warnings

HERE = pathlib.Path(__file__).resolve().parent


def train_step(seed: int = 0) -> dict:
    """One training step of a tiny Llama: the loss and each gradient's sum, by name."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch._dynamo.config.disable = True  # the outlines are compiled lazily; eager is enough here
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(config)
    ids = torch.randint(0, 64, (2, 12))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    grads = {n: float(p.grad.double().sum()) for n, p in model.named_parameters() if p.grad is not None}
    return {"loss": loss.item(), "grads": grads}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="compare one training step with the unpatched model")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(train_step()))
        return 0

    import regraft

    rules = regraft.Rules.load(HERE / "rules.yaml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hook = regraft.install(rules, packages=("transformers",), on_error="warn")
        import transformers
        import transformers.modeling_utils as modeling_utils
        import transformers.models.gpt2.modeling_gpt2 as gpt2
        import transformers.models.llama.modeling_llama as llama
        import transformers.trainer  # noqa: F401
    version = transformers.__version__
    print(f"transformers {version}: {hook.skipped} modules left to the normal loader")
    provide(llama)
    checks = {
        "fused-ce-causal-lm": "_patcher_fused_linear_ce" in _names(llama.LlamaForCausalLM.forward),
        "rope-fused-kernel": "_patcher_rope" in _names(llama.apply_rotary_pos_emb),
        "rope-drop-position-ids": "position_ids" not in inspect.signature(llama.apply_rotary_pos_emb).parameters,
        "rope-drop-position-ids-doc": "Deprecated and unused" not in (llama.apply_rotary_pos_emb.__doc__ or ""),
        "rmsnorm-residual-parameter": "residual" in inspect.signature(llama.LlamaRMSNorm.forward).parameters,
        "llama-decoder-strip-comments": "#" not in inspect.getsource(llama.LlamaDecoderLayer.forward),
        "llama-attention-outline": hasattr(llama, "LlamaAttention_forward"),
        "llama-mlp-outline": hasattr(llama, "LlamaMLP_forward"),
        "gpt2-softmax-fp32": "float32" in gpt2.eager_attention_forward.__code__.co_names,
        "gc-non-reentrant-default": _builds(modeling_utils.PreTrainedModel.gradient_checkpointing_enable,
                                            "use_reentrant", False),
    }
    for rule, ok in checks.items():
        print(f"  {rule}: {'patched' if ok else 'not patched'}")
    for warning in caught:
        print(f"  warning: {warning.message}".splitlines()[0])
    if not args.train:
        return 0
    patched = train_step()
    child = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True, check=True)
    stock = json.loads(child.stdout.strip().splitlines()[-1])
    worst = max(abs(patched["grads"][n] - stock["grads"][n]) for n in stock["grads"])
    print(f"one training step: loss {patched['loss']:.6f} (stock {stock['loss']:.6f}), "
          f"largest gradient-sum difference {worst:.3g} over {len(stock['grads'])} tensors")
    return 0 if worst < 1e-6 and abs(patched["loss"] - stock["loss"]) < 1e-6 else 1


def provide(module) -> None:
    """The helpers the rules `provide`: the patcher puts its own functions in the patched
    module. These are reference implementations (a patcher's are fused kernels computing the
    same), so one training step must equal the unpatched model's."""
    import torch
    from transformers.loss.loss_utils import ForCausalLMLoss

    def _patcher_rope(x, cos, sin):
        return (x * cos) + (module.rotate_half(x) * sin)

    def _patcher_fused_linear_ce(hidden, weight, labels, logit_scale=1.0, **kwargs):
        logits = torch.nn.functional.linear(hidden, weight) * logit_scale
        return ForCausalLMLoss(logits, labels, vocab_size=weight.shape[0], **kwargs)

    module._patcher_rope = _patcher_rope
    module._patcher_fused_linear_ce = _patcher_fused_linear_ce


def _names(function) -> tuple:
    """The global names the code under ``function``'s decorators reads."""
    return inspect.unwrap(function).__code__.co_names


def _builds(function, key, value) -> bool:
    """Whether ``function``'s code loads the constant ``key`` followed by ``value`` (a dict entry)."""
    import dis

    consts = [i.argval for i in dis.get_instructions(function) if i.opname == "LOAD_CONST"]
    return any(a == key and b is value for a, b in zip(consts, consts[1:]))


if __name__ == "__main__":
    sys.exit(main())
