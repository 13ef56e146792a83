#!/usr/bin/env bash
# What reachability costs over whole transformers releases, and what it says: for each release,
# `regraft reach` from real entry points (the loader, the Trainer's loop, generation) to
# functions patchers edit, with wall and CPU time, peak memory and the modules it read.
#   bench/reach.sh VERSION...        (default: 4.57.6 5.0.0 5.25.0)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -gt 0 ] || set -- 4.57.6 5.0.0 5.25.0
bench/fetch-transformers.sh "$@" >&2
corpus="${REGRAFT_CORPUS:-target/corpus}"
cargo build --release --quiet
questions=(
  "transformers.modeling_utils.PreTrainedModel.from_pretrained transformers.integrations.mxfp4.dequantize"
  "transformers.modeling_utils.PreTrainedModel.from_pretrained transformers.integrations.mxfp4.dequantize_convertops"
  "transformers.trainer.Trainer.train transformers.trainer.Trainer.compute_loss"
  "transformers.trainer.Trainer.train transformers.models.llama.modeling_llama.LlamaForCausalLM.forward"
  "transformers.models.llama.modeling_llama.LlamaForCausalLM.forward transformers.models.llama.modeling_llama.LlamaRMSNorm.forward"
  "transformers.generation.utils.GenerationMixin.generate transformers.models.llama.modeling_llama.LlamaForCausalLM.forward"
)
printf '%-9s %-36s %-44s %-10s %7s %7s %7s %8s\n' release from to verdict wall_s cpu_s mem_mb modules
for v in "$@"; do
  root="$corpus/transformers-$v"
  for q in "${questions[@]}"; do
    set -- $q
    from=$1 to=$2
    log=$(mktemp)
    set +e
    /usr/bin/time -f '%e %U %S %M' -o "$log.time" target/release/regraft reach "$root" --from "$from" --to "$to" >"$log" 2>&1
    set -e
    verdict=$(head -c 9 "$log" | tr -d ':')
    read -r wall user sys mem < <(tail -n 1 "$log.time") || true
    modules=$( (grep -o '([0-9]* modules read)' "$log" || true) | tr -dc '0-9')
    if grep -q "^unreached: this release does not define" "$log"; then verdict=absent; fi
    cpu=$(awk "BEGIN{print $user + $sys}")
    printf '%-9s %-36s %-44s %-10s %7s %7s %7s %8s\n' "$v" "${from#transformers.}" "${to#transformers.}" "$verdict" "$wall" "$cpu" "$((mem / 1024))" "${modules:-0}"
    rm -f "$log" "$log.time"
  done
done
