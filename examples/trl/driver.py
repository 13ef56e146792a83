"""One DPO training step with TRL patched at import time by examples/trl/rules.yaml, against the
same step with stock TRL in a child interpreter: the rules take (the patched methods are the
ones that run), and the loss and every gradient equal stock's — the rewrites touch the vision
path only, so a text model must train exactly as before. CPU, a tiny Llama built from a config
and a word-level tokenizer built here: nothing is downloaded.

    python examples/trl/driver.py            # patched vs stock, prints the figures
    python examples/trl/driver.py --stock    # the stock step alone (what the child runs)
"""

import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def step(trainer_class=None, **extra):
    """The loss and gradients of one DPO step of a tiny model, seeded; `trainer_class` (default
    `DPOTrainer`) built with `extra` arguments besides the usual ones."""
    import torch
    from datasets import Dataset
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from trl import DPOConfig, DPOTrainer

    torch.manual_seed(0)
    words = ["<pad>", "<eos>", "<unk>"] + [f"w{i}" for i in range(61)]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>",
                                        eos_token="<eos>", unk_token="<unk>")
    config = LlamaConfig(vocab_size=len(words), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=64, pad_token_id=0, eos_token_id=1)
    model = LlamaForCausalLM(config)
    rows = {"prompt": [f"w{i} w{i + 1}" for i in range(4)],
            "chosen": [f"w{i + 2} w{i + 3}" for i in range(4)],
            "rejected": [f"w{i + 9} w{i + 5}" for i in range(4)]}
    with tempfile.TemporaryDirectory() as out:
        args = DPOConfig(output_dir=out, per_device_train_batch_size=4, max_steps=1,
                         learning_rate=0.0, report_to=[], use_cpu=True, logging_steps=1,
                         save_strategy="no", dataloader_num_workers=0, seed=0)
        trainer = (trainer_class or DPOTrainer)(model=model, args=args, train_dataset=Dataset.from_dict(rows),
                                                processing_class=tokenizer, **extra)
        batch = next(iter(trainer.get_train_dataloader()))
        model.train()
        loss = trainer.compute_loss(model, batch)
        loss.backward()
    grads = {n: p.grad.double().sum().item() for n, p in model.named_parameters() if p.grad is not None}
    return {"loss": loss.item(), "grads": grads, "trainer": type(trainer).__name__,
            "extra": {k: getattr(trainer, k, None) for k in extra}}


def patched():
    """Installs the rules for `trl`, imports it, and checks each rule took."""
    import regraft

    rules = regraft.Rules.load(str(HERE / "rules.yaml"))
    hook = regraft.install(rules, packages=["trl"], on_error="raise")
    import trl.trainer.dpo_trainer as dpo

    # The helper the rules `provide`: the patcher puts its own row processor in the module.
    dpo.dpo_trainer_vision_process_row = dpo.DPOTrainer.process_row
    took = {
        "dpo-vision-process-row": "dpo_trainer_vision_process_row"
        in inspect.getsource(dpo.DPOTrainer._prepare_dataset),
        "dpo-vision-map-in-process": 'map_kwargs.pop("num_proc", None)'
        in inspect.getsource(dpo.DPOTrainer._prepare_dataset),
        "dpo-vision-signature-columns": "mm_token_type_ids"
        in inspect.getsource(dpo.DPOTrainer._set_signature_columns_if_needed),
        "dpo-vision-concatenated-inputs": "mm_token_type_ids"
        in inspect.getsource(dpo.DPOTrainer.concatenated_inputs),
        "dpo-vision-forward-kwargs": "mm_token_type_ids"
        in inspect.getsource(dpo.DPOTrainer.concatenated_forward),
    }
    return hook, took


def main():
    if "--stock" in sys.argv:
        print(json.dumps(step()))
        return 0
    hook, took = patched()
    import trl.trainer.dpo_trainer as dpo

    # The derived class trains as DPOTrainer does, with the patcher's own setting kept.
    ours = step(getattr(dpo, "UnslothDPOTrainer", None), unsloth_num_chunks=4)
    took["dpo-trainer-subclass"] = ours["trainer"] == "UnslothDPOTrainer" and ours["extra"] == {"unsloth_num_chunks": 4}
    child = subprocess.run([sys.executable, __file__, "--stock"], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONWARNINGS="ignore"))
    if child.returncode != 0:
        print(child.stderr, file=sys.stderr)
        return 1
    stock = json.loads(child.stdout.strip().splitlines()[-1])
    import trl

    print(f"trl {trl.__version__}: rules that took: {sum(took.values())} of {len(took)}")
    for rule, ok in took.items():
        print(f"  {rule}: {'took' if ok else 'DID NOT TAKE'}")
    worst = max(abs(ours["grads"][n] - stock["grads"][n]) for n in stock["grads"])
    print(f"loss patched {ours['loss']:.6f}, stock {stock['loss']:.6f}; "
          f"{len(stock['grads'])} gradients, largest difference {worst:.3g}")
    same = all(took.values()) and ours["loss"] == stock["loss"] and worst == 0.0
    print("equal" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
