#!/usr/bin/env bash
# Writes workload (d), a rule pack of N rules (default 300) `$X = self.<attr>($$$A)` for the
# N most-called `self.<attr>(` names of a tree, one rule file each, into OUT_DIR:
#   bench/rule-pack.sh TREE OUT_DIR [N]
# With SG=1 it writes ast-grep's twin of each rule instead.
set -euo pipefail
source "$(dirname "$0")/rules.sh"
tree="${1:?usage: $0 TREE OUT_DIR [N]}"; out="${2:?usage: $0 TREE OUT_DIR [N]}"; n="${3:-300}"
mkdir -p "$out"
i=0
# LC_ALL=C: the same order of equally common names on every machine.
grep -rhoE 'self\.[A-Za-z_][A-Za-z0-9_]*\(' --include='*.py' "$tree" | LC_ALL=C sort | uniq -c \
  | LC_ALL=C sort -k1,1nr -k2,2 | awk -v n="$n" 'NR <= n {print $2}' | sed 's/^self\.//; s/($//' \
  | while read -r name; do
      i=$((i+1))
      if [ "${SG:-0}" = 1 ]; then
        sgrule "d$i" "$out/d$i.yml" "\$X = self.$name(\$\$\$A)"
      else
        rule "d$i" "$out" "\$X = self.$name(\$\$\$A)"
      fi
    done
