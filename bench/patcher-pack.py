#!/usr/bin/env python3
"""Writes a bench pack of rules shaped like a patcher's port (examples/patcher), generated from
the model families of a transformers tree: per family, rules that select by class and function
name, by structure (`has`/`lacks`/`count`), statement runs, an outline, and a template with an
import. No `files` narrower than every modeling file: like a real port, the class and function
names select.

    bench/patcher-pack.py TREE OUT.yaml [N]     # N rules (default 120)
"""
import re
import sys
from pathlib import Path


def families(tree):
    """(model, {role: class name}) for modeling files holding the classes the rules name."""
    roles = {
        "attention": re.compile(r"^class (\w+Attention)\(", re.M),
        "mlp": re.compile(r"^class (\w+MLP)\(", re.M),
        "causal": re.compile(r"^class (\w+ForCausalLM)\(", re.M),
        "layer": re.compile(r"^class (\w+DecoderLayer)\(", re.M),
        "norm": re.compile(r"^class (\w+RMSNorm)\(", re.M),
        "model": re.compile(r"^class (\w+Model)\(\w+PreTrainedModel\)", re.M),
    }
    for path in sorted(Path(tree).glob("**/models/*/modeling_*.py")):
        if path.name.startswith(("modeling_tf_", "modeling_flax_")):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found = {}
        for role, regex in roles.items():
            m = regex.search(text)
            if m:
                found[role] = m.group(1)
        if len(found) == len(roles):
            yield path.parent.name, found


def rules_for(model, c):
    """The rules of one family, each a YAML document."""
    files = "files: ['**/models/*/modeling_*.py']\n"
    yield f"""id: {model}-attention-reshape
{files}inside: {{class: {c['attention']}, function: forward}}
match: 'attn_output = attn_output.reshape($$$S).contiguous()'
action: {{replace: 'attn_output = attn_output.reshape($$$S)'}}
expect: {{min: 0}}
"""
    yield f"""id: {model}-mlp-act
{files}inside:
  class: {{name: {c['mlp']}, has: 'self.act_fn = ACT2FN[$C]'}}
  function: forward
match: 'down_proj = self.down_proj($X)'
action: {{replace: 'down_proj = self.down_proj($X).contiguous()'}}
expect: {{min: 0}}
"""
    yield f"""id: {model}-layer-norms
{files}inside:
  class: {{name: {c['layer']}, has: 'self.$N = {c['norm']}($$$A)', count: 2}}
  function: forward
match: 'hidden_states = self.input_layernorm(hidden_states)'
action: {{replace: 'hidden_states = self.input_layernorm(hidden_states.contiguous())'}}
expect: {{min: 0}}
"""
    yield f"""id: {model}-causal-logits
{files}inside: {{class: {c['causal']}, function: forward}}
match: |
  logits = self.lm_head($H)
  $$$MID
  return $R
expect: {{min: 0}}
"""
    yield f"""id: {model}-norm-outline
{files}inside: {{class: {c['norm']}}}
match: 'def forward($$$P): $$$B'
action: {{outline: {{name: '{model}_rms_norm_forward'}}}}
expect: {{min: 0}}
"""
    yield f"""id: {model}-model-no-flag
{files}inside:
  class: {{name: {c['model']}, lacks: 'self.gradient_checkpointing = True'}}
  function: __init__
match: 'self.gradient_checkpointing = False'
action: {{replace: 'self.gradient_checkpointing = _gc_default()'}}
imports: ['from functools import lru_cache as _gc_default']
expect: {{min: 0}}
"""


# Rules that name no class: they select by structure (a regex over class names, `has`), so
# every file holding their pattern's literals is parsed. A port has some of these too.
GENERIC = [
    """id: generic-attention-scaling
files: ['**/models/*/modeling_*.py']
inside:
  class: {regex: '.*Attention', has: 'self.scaling = $S'}
  function: forward
match: 'attn_output = self.o_proj(attn_output)'
action: {replace: 'attn_output = self.o_proj(attn_output.contiguous())'}
expect: {min: 0}
""",
    """id: generic-mlp-down
files: ['**/models/*/modeling_*.py']
inside:
  class: {regex: '.*MLP', has: 'self.down_proj = nn.Linear($$$A)'}
  function: forward
match: 'return self.down_proj($X)'
expect: {min: 0}
""",
    """id: generic-layer-residual
files: ['**/models/*/modeling_*.py']
inside:
  class: {regex: '.*DecoderLayer', has: 'self.$N = $C($$$A)', lacks: 'self.gradient_checkpointing = True'}
  function: forward
match: |
  residual = hidden_states
  hidden_states = self.input_layernorm(hidden_states)
expect: {min: 0}
""",
    """id: generic-causal-slice
files: ['**/models/*/modeling_*.py']
inside: {class: {regex: '.*ForCausalLM'}, function: forward}
match: 'slice_indices = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep'
expect: {min: 0}
""",
]


def main():
    tree, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    docs = list(GENERIC)
    for model, classes in families(tree):
        docs.extend(rules_for(model, classes))
        if len(docs) >= n:
            break
    docs = docs[:n]
    if len(docs) < n:
        sys.exit(f"only {len(docs)} rules: the tree has too few families")
    Path(out).write_text("---\n".join(docs), encoding="utf-8")
    print(f"{len(docs)} rules ({len(GENERIC)} generic) -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
