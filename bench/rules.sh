# The benchmark workloads' rules, sourced by the bench scripts so that every script measures
# the same rules.

# One regraft rule per pattern: removes `output_attentions`, any number of matches.
rule() { # NAME DIR PATTERN  (writes DIR/NAME.yaml)
  printf 'id: %s\nmatch: "%s"\naction: {remove_kwargs: [output_attentions]}\nexpect: {min: 0}\n' "$1" "$3" > "$2/$1.yaml"
}

# Its ast-grep twin.
sgrule() { # NAME FILE PATTERN
  printf 'id: %s\nlanguage: python\nseverity: info\nrule:\n  pattern: "%s"\n' "$1" "$3" > "$2"
}

# Workload (c): realistic call and statement patterns, run with the shipped rules.
C_PATTERNS=(
  '$OUT = decoder_layer($$$ARGS)' '$OUT = encoder_layer($$$ARGS)' '$OUT = layer_module($$$ARGS)'
  '$OUT = self.self_attn($$$ARGS)' '$OUT = self.mlp($$$ARGS)' '$OUT = self.attention($$$ARGS)'
  '$X = self._gradient_checkpointing_func($$$A)' '$X = torch.utils.checkpoint.checkpoint($$$A)'
  '$X = nn.functional.dropout($$$A)' '$X = self.dropout($$$A)' '$X = self.layer_norm($$$A)'
  '$X = self.embed_tokens($$$A)' '$X = self.rotary_emb($$$A)' '$X = apply_rotary_pos_emb($$$A)'
  '$X = repeat_kv($$$A)' '$X = torch.matmul($$$A)' '$X = nn.functional.softmax($$$A)'
  '$X = self.q_proj($$$A)' '$X = self.k_proj($$$A)' '$X = self.v_proj($$$A)' '$X = self.o_proj($$$A)'
  '$X = eager_attention_forward($$$A)' '$X = self.lm_head($$$A)' '$X = self.loss_function($$$A)'
)
