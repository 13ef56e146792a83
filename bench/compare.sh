#!/usr/bin/env bash
# regraft against ast-grep on the real transformers 4.57.6 models/ tree: whole-process CPU
# time (user + system), wall time and peak RSS, median of RUNS runs (default 5), for:
#   (a) one rule `$OUT = decoder_layer($$$ARGS)`, as `apply --check`
#   (b) one rule every file must be parsed for: `$X = $Y($$$A)`
#   (c) 30 rules at once (the shipped ones plus realistic call and statement patterns)
#   (d) a pack of 300 rules `$X = self.<attr>($$$A)` for the tree's 300 most-called
#       `self.<attr>(` names (bench/rule-pack.sh)
#   (depth) `$X` kept to parenthesized expressions, with `delete`, on one statement nested
#       20,000 parentheses deep (bare `$X` is refused up front)
#   (matrix) `matrix` of the shipped rules over 8 releases, against the newest one alone
# ast-grep comes from PyPI (ast-grep-cli) in a venv under target/; the trees are fetched by
# bench/fetch-transformers.sh into target/corpus (or $REGRAFT_CORPUS). Prints a table.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
version=4.57.6
releases=(4.46.3 4.50.3 4.51.3 4.52.4 4.53.3 4.55.4 4.56.2 "$version")
bench/fetch-transformers.sh "${releases[@]}" >&2
corpus="${REGRAFT_CORPUS:-target/corpus}"
tree="$corpus/transformers-$version/transformers/models"
venv=target/bench-venv
[ -x "$venv/bin/ast-grep" ] || { python3 -m venv "$venv"; "$venv/bin/pip" install --quiet ast-grep-cli; }
cargo build --release --quiet
work=target/bench; rm -rf "$work"; mkdir -p "$work/c-regraft" "$work/c-sg" "$work/d-sg"

source bench/rules.sh
rule a "$work" '$OUT = decoder_layer($$$ARGS)'; sgrule a "$work/a-sg.yml" '$OUT = decoder_layer($$$ARGS)'
rule b "$work" '$X = $Y($$$A)';                  sgrule b "$work/b-sg.yml" '$X = $Y($$$A)'
i=0
for p in "${C_PATTERNS[@]}"; do
  i=$((i+1)); rule "c$i" "$work/c-regraft" "$p"; sgrule "c$i" "$work/c-sg/c$i.yml" "$p"
done
cp rules/*.yaml "$work/c-regraft/"
# ast-grep twins of the shipped rules' patterns (without their scopes, which it spells differently).
for p in '$OUT = $LAYER($$$ARGS)' '@torch.compile($$$A)' 'def __init__($$$P): $$$B' 'def compiled_embeddings($$$P): $$$B' 'layer_outputs = $LAYER($$$ARGS)' 'layer_outputs = $L($$$A)'; do
  i=$((i+1)); sgrule "c$i" "$work/c-sg/c$i.yml" "$p"
done
printf 'ruleDirs: [c-sg]\n' > "$work/sgconfig.yml"
bench/rule-pack.sh "$tree" "$work/d-regraft"
SG=1 bench/rule-pack.sh "$tree" "$work/d-sg/d-sg"
printf 'ruleDirs: [d-sg]\n' > "$work/d-sg/sgconfig.yml"
# The depth case: one statement, 20,000 parentheses deep.
python3 -c "open('$work/deep.py', 'w').write('x = ' + '(' * 20000 + '1' + ')' * 20000 + '\\n')"
printf 'id: depth\nmatch: "$X"\nwhere: {$X: {kind: parenthesized_expression}}\naction: {delete: true}\n' > "$work/depth.yaml"
printf 'id: depth\nlanguage: python\nseverity: info\nrule:\n  kind: parenthesized_expression\n' > "$work/depth-sg.yml"
with="--with transformers=$version"
matrix_targets=""
for v in "${releases[@]}"; do matrix_targets+=" --target transformers=$v:$corpus/transformers-$v/transformers"; done

python3 - "$runs" "$tree" "$work" "$with" "$matrix_targets" "$corpus/transformers-$version/transformers" <<'PY'
import os, statistics, subprocess, sys
runs, tree, work, with_ = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].split()
matrix_targets, newest = sys.argv[5].split(), sys.argv[6]
regraft = "target/release/regraft"; sg = "target/bench-venv/bin/ast-grep"
root = os.getcwd()
def measure(cmd, cwd=None):
    cpus, walls, rss = [], [], []
    for _ in range(runs):
        r = subprocess.run(["/usr/bin/time", "-f", "%U %S %e %M"] + cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        user, system, wall, kb = r.stderr.strip().splitlines()[-1].split()
        cpus.append(float(user) + float(system)); walls.append(float(wall)); rss.append(int(kb) / 1024)
    return statistics.median(cpus), statistics.median(walls), max(rss)
def check(name):
    return [regraft, "apply", "-r", f"{work}/{name}", "--check", *with_, tree]
rows = []
for name, rp, sgc, sgcwd in [
    ("(a)", check("a.yaml"), [sg, "scan", "-r", f"{work}/a-sg.yml", tree], None),
    ("(b)", check("b.yaml"), [sg, "scan", "-r", f"{work}/b-sg.yml", tree], None),
    ("(c)", check("c-regraft"), [os.path.join(root, sg), "scan", os.path.join(root, tree)], work),
    ("(d) 300 rules", check("d-regraft"), [os.path.join(root, sg), "scan", os.path.join(root, tree)], f"{work}/d-sg"),
    ("(depth) 20,000 deep", [regraft, "apply", "-r", f"{work}/depth.yaml", "--check", f"{work}/deep.py"], [sg, "scan", "-r", f"{work}/depth-sg.yml", f"{work}/deep.py"], None),
    ("(matrix) 8 releases", [regraft, "matrix", "-r", "rules", *matrix_targets], None, None),
    ("(matrix) newest alone", [regraft, "matrix", "-r", "rules", "--target", f"transformers=4.57.6:{newest}"], None, None),
]:
    ours = measure(rp)
    theirs = measure(sgc, cwd=sgcwd) if sgc else None
    rows.append((name, ours, theirs))
print(f"machine: {os.cpu_count()} cores; median of {runs} runs; transformers 4.57.6 models/ ({sum(len(f) for _,_,f in os.walk(tree))} files)")
print("| workload | regraft CPU | regraft wall | regraft peak RSS | ast-grep CPU | ast-grep wall | ast-grep peak RSS | CPU regraft / ast-grep |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, (rc, rw, rm), theirs in rows:
    if theirs:
        sc, sw, sm = theirs
        print(f"| {name} | {rc:.2f} s | {rw:.2f} s | {rm:.0f} MB | {sc:.2f} s | {sw:.2f} s | {sm:.0f} MB | {rc / sc:.2f} |")
    else:
        print(f"| {name} | {rc:.2f} s | {rw:.2f} s | {rm:.0f} MB | — | — | — | — |")
cpu = {name: ours[0] for name, ours, _ in rows}
print(f"regraft CPU: (c) / (b) {cpu['(c)'] / cpu['(b)']:.2f}; (d) / (b) {cpu['(d) 300 rules'] / cpu['(b)']:.2f}; "
      f"matrix 8 releases / newest alone {cpu['(matrix) 8 releases'] / cpu['(matrix) newest alone']:.2f}")
PY

# The parse floor: tree-sitter-python alone, parsing whole files (all of them, and those holding
# `decoder_layer`): what any whole-file parser needs at least. regraft parses only the statements
# statement-local rules could match, so it can run below it.
cargo bench --quiet --bench parse_floor -- "$tree" decoder_layer 2>/dev/null | grep -E '^(all files|files containing)'
