#!/usr/bin/env python3
"""Writes a pack of N rules shaped like a real runtime patcher's port, drawn (by a seed) from
the shapes such ports have and the names a transformers tree really uses — not from the shapes
regraft's own bench pack was tuned on:

- call patterns whose head is a metavariable narrowed by `where` regexes
  (`$W = $F($X, dim=$D)` with `$F: {regex: '(nn\\.functional|\\bF)\\.softmax$'}`), in several
  operand shapes, for the functional calls the tree makes most;
- `self.$E($X)` with regexes on both captures, for the tree's most-called submodules;
- decorator deletions (`@auto_docstring($$$A)`, `@can_return_tuple`) that edit most files;
- imports inside any function (`from ..$M import $$$N` under `function: {regex: '.*'}`);
- statement runs (`residual = hidden_states` … `hidden_states = residual + hidden_states`);
- class scopes with `has`/`lacks`/`count`, by exact name and by regex;
- the rules of `examples/patcher` and `examples/trl` as shipped.

    bench/real-pack.py TREE OUT.yaml [N] [SEED]     # N rules (default 150), SEED (default 1)
"""
import collections
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELING = "files: ['**/models/*/modeling_*.py']\n"


def quote(text):
    """A YAML single-quoted scalar."""
    return "'" + text.replace("'", "''") + "'"


def tree_names(tree):
    """What the tree calls most: functional heads (`F.softmax`), `self.<attr>(` and the classes
    of each role, counted over its modeling files."""
    functional = collections.Counter()
    attrs = collections.Counter()
    classes = collections.defaultdict(list)
    roles = {
        "attention": r"\w+Attention", "mlp": r"\w+MLP", "layer": r"\w+DecoderLayer",
        "norm": r"\w+RMSNorm", "causal": r"\w+ForCausalLM",
    }
    for path in sorted(Path(tree).glob("models/*/modeling_*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        functional.update(re.findall(r"\b(?:nn\.functional|F)\.([a-z_]+)\(", text))
        attrs.update(re.findall(r"\bself\.([a-z][a-z0-9_]*)\(", text))
        for role, pattern in roles.items():
            classes[role].extend(re.findall(rf"^class ({pattern})\(", text, re.M))
    return functional, attrs, classes


def functional_rules(rng, functional, n):
    """A metavariable head narrowed by a regex, in the operand shapes a port writes one rule
    each for (the softmax rule of the issue came in four copies)."""
    shapes = [
        ("$W = $F($X, dim=$D)", "$W = $F($X.float(), dim=$D).to($X.dtype)"),
        ("$W = $F($X, dim=$D, dtype=$T)", "$W = $F($X, dim=$D, dtype=$T).contiguous()"),
        ("return $F($X, dim=$D)", "return $F($X, dim=$D, dtype=torch.float32)"),
        ("$W = $F($X, p=$P, training=self.training)", "$W = $F($X, p=$P, training=False)"),
        ("$W = $F($$$A)", None),
    ]
    names = [name for name, _ in functional.most_common(12)]
    for i in range(n):
        name = rng.choice(names)
        match, by = rng.choice(shapes)
        action = f"action: {{replace: {quote(by)}}}\n" if by else ""
        head = quote(r"(nn\.functional|\bF)\." + name + "$")
        yield (f"id: functional-{i}-{name}\n{MODELING}match: {quote(match)}\nwhere:\n"
               f"  $F: {{regex: {head}}}\n"
               f"{action}expect: {{min: 0}}\n")


def submodule_rules(rng, attrs, n):
    """`self.$E($X)` with a regex on each capture."""
    common = [name for name, _ in attrs.most_common(40)]
    operands = ["hidden_states", "attn_output", "x", "query_states", "inputs_embeds"]
    for i in range(n):
        picked = sorted(rng.sample(common, rng.randint(1, 3)))
        operand = rng.choice(operands)
        match = rng.choice(["$Y = self.$E($X)", "self.$E($X)", "return self.$E($X)"])
        yield (f"id: submodule-{i}\n{MODELING}match: {quote(match)}\nwhere:\n"
               f"  $E: {{regex: {quote('^(' + '|'.join(picked) + ')$')}}}\n"
               f"  $X: {{regex: {quote('^' + operand + '$')}}}\n"
               f"expect: {{min: 0}}\n")


DECORATORS = ["@auto_docstring($$$A)", "@auto_docstring", "@can_return_tuple",
              "@add_start_docstrings($$$A)", "@add_start_docstrings_to_model_forward($$$A)",
              "@deprecate_kwarg($$$A)", "@check_model_inputs", "@use_kernel_forward_from_hub($$$A)"]


def decorator_rules(rng, n):
    """Documentation decorators deleted across every modeling file."""
    for i in range(n):
        picked = rng.sample(DECORATORS, rng.randint(1, 3))
        alternatives = "".join(f"  - {quote(d)}\n" for d in picked)
        yield (f"id: decorators-{i}\n{MODELING}match:\n  any:\n{alternatives}"
               f"action: {{delete: true}}\nexpect: {{min: 0}}\n")


def import_rules(rng, n):
    """Imports written inside functions, in any function."""
    shapes = ["from ..$M import $$$N", "from ...$M import $$$N", "from .$M import $$$N",
              "import $M"]
    for i in range(n):
        yield (f"id: local-import-{i}\n{MODELING}inside: {{function: {{regex: '.*'}}}}\n"
               f"match: {quote(rng.choice(shapes))}\nexpect: {{min: 0}}\n")


RUNS = [
    "residual = hidden_states\n$$$MID\nhidden_states = residual + hidden_states",
    "hidden_states = self.post_attention_layernorm(hidden_states)\n"
    "hidden_states = self.mlp(hidden_states)",
    "query_states = self.q_proj(hidden_states).view($$$Q).transpose(1, 2)\n"
    "key_states = self.k_proj(hidden_states).view($$$K).transpose(1, 2)",
    "attn_output = attn_output.reshape($$$S).contiguous()\nattn_output = self.o_proj(attn_output)",
    "logits = self.lm_head($H)\n$$$MID\nreturn $R",
]


def run_rules(rng, classes, n):
    """Statement runs, scoped to a role's classes by regex or to one class by name."""
    for i in range(n):
        run = rng.choice(RUNS)
        role = rng.choice(["attention", "layer", "causal"])
        suffix = {"layer": "DecoderLayer", "causal": "ForCausalLM"}.get(role, "Attention")
        scope = (f"{{regex: '.*{suffix}'}}" if rng.random() < 0.5 or not classes[role]
                 else rng.choice(classes[role]))
        body = "".join(f"  {line}\n" for line in run.splitlines())
        yield (f"id: run-{i}\n{MODELING}inside: {{class: {scope}, function: forward}}\n"
               f"match: |\n{body}expect: {{min: 0}}\n")


def structure_rules(rng, classes, n):
    """Class scopes that select by what the class holds."""
    shapes = [
        ("mlp", "has: 'self.act_fn = ACT2FN[$C]'", "down_proj = self.down_proj($X)",
         "down_proj = self.down_proj($X).contiguous()"),
        ("layer", "has: 'self.$N = $C($$$A)', count: 2", "hidden_states = self.input_layernorm(hidden_states)",
         "hidden_states = self.input_layernorm(hidden_states.contiguous())"),
        ("attention", "has: 'self.scaling = $S'", "attn_output = self.o_proj(attn_output)",
         "attn_output = self.o_proj(attn_output.contiguous())"),
        ("norm", "lacks: 'self.offset = $O'", "return self.weight * hidden_states.to(input_dtype)",
         "return (self.weight * hidden_states).to(input_dtype)"),
    ]
    for i in range(n):
        role, holds, match, by = rng.choice(shapes)
        if rng.random() < 0.5 or not classes[role]:
            suffix = {"mlp": "MLP", "norm": "RMSNorm"}.get(role, role.title())
            scope = f"{{regex: '.*{suffix}', {holds}}}"
        else:
            scope = f"{{name: {rng.choice(classes[role])}, {holds}}}"
        yield (f"id: structure-{i}\n{MODELING}inside:\n  class: {scope}\n  function: forward\n"
               f"match: {quote(match)}\naction: {{replace: {quote(by)}}}\nexpect: {{min: 0}}\n")


def shipped_rules():
    """The example packs' rules as shipped (their ids are unique across both)."""
    for pack in ("patcher", "trl"):
        text = (ROOT / "examples" / pack / "rules.yaml").read_text(encoding="utf-8")
        for doc in re.split(r"^---\s*$", text, flags=re.M):
            if re.search(r"^id: ", doc, re.M):
                yield doc.strip("\n") + "\n"


def main():
    tree, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    functional, attrs, classes = tree_names(tree)
    shipped = list(shipped_rules())
    rest = max(n - len(shipped), 0)
    # The mix of a real port: mostly call rewrites, then decorators, structure, runs, imports.
    share = {"functional": 0.3, "submodule": 0.2, "decorator": 0.1, "structure": 0.2,
             "run": 0.12, "import": 0.08}
    counts = {kind: int(rest * part) for kind, part in share.items()}
    counts["functional"] += rest - sum(counts.values())
    docs = shipped + [
        *functional_rules(rng, functional, counts["functional"]),
        *submodule_rules(rng, attrs, counts["submodule"]),
        *decorator_rules(rng, counts["decorator"]),
        *structure_rules(rng, classes, counts["structure"]),
        *run_rules(rng, classes, counts["run"]),
        *import_rules(rng, counts["import"]),
    ]
    docs = docs[:n]
    Path(out).write_text("---\n".join(docs), encoding="utf-8")
    print(f"{len(docs)} rules ({len(shipped)} from the examples) -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
