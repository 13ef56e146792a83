#!/usr/bin/env bash
# regraft against ast-grep on the real transformers 4.57.6 models/ tree: whole-process wall
# time and peak RSS, median of RUNS runs (default 5), for three workloads:
#   (a) one rule `$OUT = decoder_layer($$$ARGS)`, as `apply --check`
#   (b) one rule every file must be parsed for: `$X = $Y($$$A)`
#   (c) 30 rules at once (the shipped ones plus realistic call and statement patterns)
# ast-grep comes from PyPI (ast-grep-cli) in a venv under target/; the tree is fetched by
# bench/fetch-transformers.sh into target/corpus (or $REGRAFT_CORPUS). Prints a table.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
version=4.57.6
bench/fetch-transformers.sh "$version" >&2
tree="${REGRAFT_CORPUS:-target/corpus}/transformers-$version/transformers/models"
venv=target/bench-venv
[ -x "$venv/bin/ast-grep" ] || { python3 -m venv "$venv"; "$venv/bin/pip" install --quiet ast-grep-cli; }
cargo build --release --quiet
work=target/bench; rm -rf "$work"; mkdir -p "$work/c-regraft" "$work/c-sg"

# One regraft rule and its ast-grep twin per pattern.
rule() { # NAME DIR PATTERN
  printf 'id: %s\nmatch: "%s"\naction: {remove_kwargs: [output_attentions]}\nexpect: {min: 0}\n' "$1" "$3" > "$2/$1.yaml"
}
sgrule() { # NAME FILE PATTERN
  printf 'id: %s\nlanguage: python\nseverity: info\nrule:\n  pattern: "%s"\n' "$1" "$3" > "$2"
}
rule a "$work" '$OUT = decoder_layer($$$ARGS)'; sgrule a "$work/a-sg.yml" '$OUT = decoder_layer($$$ARGS)'
rule b "$work" '$X = $Y($$$A)';                  sgrule b "$work/b-sg.yml" '$X = $Y($$$A)'
patterns=(
  '$OUT = decoder_layer($$$ARGS)' '$OUT = encoder_layer($$$ARGS)' '$OUT = layer_module($$$ARGS)'
  '$OUT = self.self_attn($$$ARGS)' '$OUT = self.mlp($$$ARGS)' '$OUT = self.attention($$$ARGS)'
  '$X = self._gradient_checkpointing_func($$$A)' '$X = torch.utils.checkpoint.checkpoint($$$A)'
  '$X = nn.functional.dropout($$$A)' '$X = self.dropout($$$A)' '$X = self.layer_norm($$$A)'
  '$X = self.embed_tokens($$$A)' '$X = self.rotary_emb($$$A)' '$X = apply_rotary_pos_emb($$$A)'
  '$X = repeat_kv($$$A)' '$X = torch.matmul($$$A)' '$X = nn.functional.softmax($$$A)'
  '$X = self.q_proj($$$A)' '$X = self.k_proj($$$A)' '$X = self.v_proj($$$A)' '$X = self.o_proj($$$A)'
  '$X = eager_attention_forward($$$A)' '$X = self.lm_head($$$A)' '$X = self.loss_function($$$A)'
)
i=0
for p in "${patterns[@]}"; do
  i=$((i+1)); rule "c$i" "$work/c-regraft" "$p"; sgrule "c$i" "$work/c-sg/c$i.yml" "$p"
done
cp rules/*.yaml "$work/c-regraft/"
# ast-grep twins of the shipped rules' patterns (without their scopes, which it spells differently).
for p in '$OUT = $LAYER($$$ARGS)' '@torch.compile($$$A)' 'def __init__($$$P): $$$B' 'def compiled_embeddings($$$P): $$$B' 'layer_outputs = $LAYER($$$ARGS)' 'layer_outputs = $L($$$A)'; do
  i=$((i+1)); sgrule "c$i" "$work/c-sg/c$i.yml" "$p"
done
printf 'ruleDirs: [c-sg]\n' > "$work/sgconfig.yml"
with="--with transformers=$version"

python3 - "$runs" "$tree" "$work" "$with" <<'PY'
import os, statistics, subprocess, sys
runs, tree, work, with_ = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].split()
regraft = "target/release/regraft"; sg = "target/bench-venv/bin/ast-grep"
def measure(cmd, cwd=None):
    walls, rss = [], []
    for _ in range(runs):
        r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall, kb = r.stderr.strip().splitlines()[-1].split()
        walls.append(float(wall)); rss.append(int(kb) / 1024)
    return statistics.median(walls), max(rss)
root = os.getcwd()
rows = []
for name, rp, sgc, sgcwd in [
    ("a", [regraft, "apply", "-r", f"{work}/a.yaml", "--check", *with_, tree], [sg, "scan", "-r", f"{work}/a-sg.yml", tree], None),
    ("b", [regraft, "apply", "-r", f"{work}/b.yaml", "--check", *with_, tree], [sg, "scan", "-r", f"{work}/b-sg.yml", tree], None),
    ("c", [regraft, "apply", "-r", f"{work}/c-regraft", "--check", *with_, tree], [os.path.join(root, sg), "scan", os.path.join(root, tree)], work),
]:
    (rw, rm), (sw, sm) = measure(rp), measure(sgc, cwd=sgcwd)
    rows.append((name, rw, rm, sw, sm))
print(f"machine: {os.cpu_count()} cores; median of {runs} runs; transformers 4.57.6 models/ ({sum(len(f) for _,_,f in os.walk(tree))} files)")
print("| workload | regraft wall | regraft peak RSS | ast-grep wall | ast-grep peak RSS | regraft / ast-grep |")
print("| --- | --- | --- | --- | --- | --- |")
for name, rw, rm, sw, sm in rows:
    print(f"| ({name}) | {rw:.2f} s | {rm:.0f} MB | {sw:.2f} s | {sm:.0f} MB | {rw / sw:.2f} |")
b = next(r for r in rows if r[0] == "b"); c = next(r for r in rows if r[0] == "c")
print(f"(c) / (b) for regraft: {c[1] / b[1]:.2f}")
PY

# The parse floor: tree-sitter-python alone, parsing whole files (all of them, and those holding
# `decoder_layer`): what any whole-file parser needs at least. regraft parses only the statements
# statement-local rules could match, so it can run below it.
cargo bench --quiet --bench parse_floor -- "$tree" decoder_layer 2>/dev/null | grep -E '^(all files|files containing)'
