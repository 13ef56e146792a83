"""The shipped rules in training steps across model families (run by bench/families.sh, in a
venv with torch and transformers; not in CI).

For each family a tiny randomly initialised model is built from its config on CPU (no weights
are downloaded) and takes one training step: without gradient checkpointing (the reference),
then with checkpointing `use_reentrant=True` and the non-reentrant implementation. Inputs
exercise what layers receive by keyword: attention masks with padding, head masks where the
model takes them, encoder states, cache off. Three interpreters run the same steps: stock,
with the import hook (`regraft.install`), and with `regraft.patch` on every class of the
family's modeling module. The parent compares every gradient with the stock reference.

    python bench/families.py [--only llama,bert]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

BASE = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=37, max_position_embeddings=64,
            pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
SEQ2SEQ = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37)
# family -> (kind, config overrides)
FAMILIES = {
    "llama": ("causal", {}), "mistral": ("causal", {}), "qwen2": ("causal", {}),
    "qwen3": ("causal", {"head_dim": 8}), "gemma": ("causal", {"head_dim": 8}),
    "gemma2": ("causal", {"head_dim": 8}), "phi": ("causal", {}), "phi3": ("causal", {}),
    "gpt2": ("causal", {"n_embd": 32, "n_layer": 2, "n_head": 4}),
    "gpt_neox": ("causal", {}), "falcon": ("causal", {"new_decoder_architecture": False}),
    "olmo": ("causal", {}), "stablelm": ("causal", {}), "starcoder2": ("causal", {}),
    "granite": ("causal", {}), "opt": ("causal", {"ffn_dim": 37, "word_embed_proj_dim": 32}),
    "bloom": ("causal", {"n_layer": 2, "n_head": 4}), "mixtral": ("causal", {"num_local_experts": 4, "intermediate_size": 48}),
    "cohere": ("causal", {}), "gptj": ("causal", {"n_embd": 32, "n_layer": 2, "n_head": 4, "rotary_dim": 4}),
    "bert": ("masked", {}), "roberta": ("masked", {}), "electra": ("masked", {"embedding_size": 32}),
    "t5": ("seq2seq", {"d_model": 32, "d_kv": 8, "d_ff": 37, "num_layers": 2,
                       "num_decoder_layers": 2, "num_heads": 4}),
    "bart": ("seq2seq", SEQ2SEQ), "mbart": ("seq2seq", SEQ2SEQ), "marian": ("seq2seq", SEQ2SEQ),
    "pegasus": ("seq2seq", SEQ2SEQ),
    "whisper": ("speech", dict(SEQ2SEQ, num_mel_bins=8, max_source_positions=16, max_target_positions=16)),
    "vit": ("image", {"image_size": 32, "patch_size": 8, "num_labels": 2}),
    "wav2vec2": ("audio", {"conv_dim": (32, 32), "conv_stride": (5, 2), "conv_kernel": (10, 3),
                           "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 2,
                           "do_stable_layer_norm": True}),
}
DROPOUTS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout",
            "activation_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop", "hidden_dropout",
            "classifier_dropout", "dropout_rate", "final_dropout", "feat_proj_dropout", "layerdrop",
            "encoder_layerdrop", "decoder_layerdrop", "mask_time_prob")


def build(family):
    """The family's tiny model and its inputs (a dict of tensors)."""
    import torch
    import transformers as tf

    kind, overrides = FAMILIES[family]
    config = tf.AutoConfig.for_model(family, **dict(BASE, **{d: 0.0 for d in DROPOUTS}, **overrides))
    auto = {"causal": tf.AutoModelForCausalLM, "masked": tf.AutoModelForMaskedLM,
            "seq2seq": tf.AutoModelForSeq2SeqLM, "speech": tf.AutoModelForSpeechSeq2Seq,
            "image": tf.AutoModelForImageClassification, "audio": tf.AutoModel}[kind]
    torch.manual_seed(0)
    model = auto.from_config(config)
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 99, (2, 10), generator=g)
    mask = torch.ones(2, 10, dtype=torch.long)
    mask[1, -3:] = 0  # padding: the mask matters
    if kind in ("causal", "masked"):
        inputs = dict(input_ids=ids, attention_mask=mask, labels=ids)
    elif kind == "seq2seq":
        labels = torch.randint(3, 99, (2, 6), generator=g)
        inputs = dict(input_ids=ids, attention_mask=mask, labels=labels)
    elif kind == "speech":
        inputs = dict(input_features=torch.randn(2, 8, 32, generator=g),
                      labels=torch.randint(3, 99, (2, 6), generator=g))
    elif kind == "image":
        inputs = dict(pixel_values=torch.randn(2, 3, 32, 32, generator=g), labels=torch.tensor([0, 1]))
    else:
        inputs = dict(input_values=torch.randn(2, 800, generator=g))
    import inspect

    accepted = inspect.signature(model.forward).parameters
    layers, heads = 2, 4
    for name in ("head_mask", "decoder_head_mask", "cross_attn_head_mask"):
        if name in accepted:  # a head mask that changes the result, so a mis-bound one shows
            hm = torch.ones(layers, heads)
            hm[1, 0] = 0.0
            inputs[name] = hm
    if "use_cache" in accepted:
        inputs["use_cache"] = False
    return model, inputs


def step(model, inputs):
    import torch

    model.zero_grad(set_to_none=True)
    model.train()
    torch.manual_seed(0)
    out = model(**inputs)
    loss = out.loss if getattr(out, "loss", None) is not None else out[0].pow(2).mean()
    loss.backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def child(mode, families, out_dir):
    """Runs every family's steps in this interpreter, saving gradients; prints a JSON report."""
    import warnings

    import torch

    report = {}
    rules = None
    if mode != "stock":
        import regraft

        rules = regraft.Rules.load(str(ROOT / "rules"))
    if mode == "hook":
        regraft.install(rules, packages=("transformers",), on_error="warn")
    import importlib

    import transformers

    for family in families:
        entry = report.setdefault(family, {})
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model, inputs = build(family)
                module = importlib.import_module(type(model).__module__)
                if mode == "patch":
                    edited = set()
                    for value in list(vars(module).values()):
                        if isinstance(value, type) and value.__module__ == module.__name__ \
                                and issubclass(value, torch.nn.Module):
                            handle = regraft.patch(value, rules, on_error="warn",
                                                   versions={"transformers": transformers.__version__})
                            edited.update(handle.rules)
                    entry["rules"] = sorted(edited)
            entry["warnings"] = sorted({str(w.message).splitlines()[0][:160] for w in caught
                                        if "regraft" in str(w.message) or issubclass(w.category, RuntimeWarning)})[:3]
        except Exception as error:  # a family that cannot be built is listed, not dropped
            entry["build"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            continue
        for setting in ("reference", "reentrant", "non_reentrant"):
            try:
                if setting != "reference":
                    model.gradient_checkpointing_enable(
                        gradient_checkpointing_kwargs={"use_reentrant": setting == "reentrant"})
                grads = step(model, inputs)
                torch.save(grads, os.path.join(out_dir, f"{mode}-{family}-{setting}.pt"))
                entry[setting] = "ran"
            except Exception as error:
                entry[setting] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
    print(json.dumps({"transformers": transformers.__version__, "torch": torch.__version__,
                      "families": report}))


def compare(a, b):
    if set(a) != set(b):
        return float("inf")
    return max(((a[n] - b[n]).abs().max().item() for n in a), default=0.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--child", default="")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    families = [f for f in args.only.split(",") if f] or list(FAMILIES)
    if args.child:
        child(args.child, families, args.out)
        return 0
    import torch

    out = tempfile.mkdtemp(prefix="regraft-families-")
    reports = {}
    for mode in ("stock", "hook", "patch"):
        run = subprocess.run([sys.executable, __file__, "--child", mode, "--out", out,
                              "--only", ",".join(families)], capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stderr[-4000:])
            raise SystemExit(f"{mode}: exited {run.returncode}")
        reports[mode] = json.loads(run.stdout.strip().splitlines()[-1])
    head = reports["stock"]
    print(f"transformers {head['transformers']}, torch {head['torch']}: {len(families)} families")
    print(f"{'family':12} {'stock reentrant':18} {'stock non-re.':14} {'hook reentrant':15} "
          f"{'patch reentrant':16} {'max |Δgrad|':12} rules")
    worse = []
    for family in families:
        stock = reports["stock"]["families"][family]
        if "build" in stock:
            print(f"{family:12} skipped: {stock['build']}")
            continue

        def load(mode, setting):
            path = os.path.join(out, f"{mode}-{family}-{setting}.pt")
            return torch.load(path) if os.path.exists(path) else None

        reference = load("stock", "reference")

        def outcome(mode, setting):
            entry = reports[mode]["families"][family]
            status = entry.get(setting, entry.get("build", "?"))
            if status != "ran":
                return "error", None
            diff = compare(load(mode, setting), reference)
            return ("fine" if diff <= 1e-5 else "wrong"), diff

        cells, diffs = {}, []
        for mode in ("stock", "hook", "patch"):
            for setting in ("reference", "reentrant", "non_reentrant"):
                cells[mode, setting], diff = outcome(mode, setting)
                if mode != "stock" and diff is not None:
                    diffs.append(diff)
        for mode in ("hook", "patch"):
            for setting in ("reference", "reentrant", "non_reentrant"):
                before, after = cells["stock", setting], cells[mode, setting]
                if after != "fine" and before == "fine":
                    worse.append(f"{family} {mode} {setting}: {after}")
        rules = ",".join(reports["patch"]["families"][family].get("rules", [])) or "-"
        print(f"{family:12} {cells['stock', 'reentrant']:18} {cells['stock', 'non_reentrant']:14} "
              f"{cells['hook', 'reentrant']:15} {cells['patch', 'reentrant']:16} "
              f"{max(diffs, default=float('nan')):<12.3g} {rules}")
    print("worse with the patch: " + ("; ".join(worse) if worse else "none"))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
