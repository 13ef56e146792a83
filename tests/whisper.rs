//! The Whisper case end to end: the shipped rule on call shapes of transformers 4.5x and 5.x.

use crate::util::{patch, render, versions, whisper_rule};

const PATH: &str = "transformers/models/whisper/modeling_whisper.py";

/// A Whisper-shaped module: `layer` is the signature of the decoder layer, `call` the
/// statement in the decoder's loop.
fn module(signature: &str, call: &str) -> String {
    let call: String = call.lines().map(|l| format!("            {l}\n")).collect();
    format!(
        "class WhisperDecoderLayer(GradientCheckpointingLayer):\n    def forward(\n        self,\n{signature}    ):\n        return (hidden_states,)\n\n\nclass WhisperDecoder(WhisperPreTrainedModel):\n    def forward(self, hidden_states, causal_mask=None, **kwargs):\n        for idx, decoder_layer in enumerate(self.layers):\n{call}        return hidden_states\n"
    )
}

const SIGNATURE_4_57: &str = "        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        encoder_hidden_states: Optional[torch.Tensor] = None,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        layer_head_mask: Optional[torch.Tensor] = None,
        cross_attn_layer_head_mask: Optional[torch.Tensor] = None,
        past_key_values: Optional[EncoderDecoderCache] = None,
        output_attentions: Optional[bool] = False,
        use_cache: Optional[bool] = True,
        cache_position: Optional[torch.LongTensor] = None,
";

const SIGNATURE_5: &str = "        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        cache: EncoderDecoderCache | None = None,
        use_cache: bool | None = True,
        **kwargs: Unpack[TransformersKwargs],
";

/// Patches the module built from `signature` and `call` and returns the patched loop body.
fn patched_call(signature: &str, call: &str, version: &str) -> String {
    let source = module(signature, call);
    let out = patch(
        &whisper_rule(),
        &versions(&[&format!("transformers={version}")]),
        PATH,
        &source,
    )
    .unwrap_or_else(|e| panic!("{}", render(&e)));
    let start = out.output.find("        for idx").unwrap();
    let end = out.output.find("        return hidden_states\n").unwrap();
    out.output[start..end].to_string()
}

#[test]
fn a_skipped_parameter_is_filled_with_its_default() {
    let got = patched_call(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(\n    hidden_states,\n    attention_mask=causal_mask,\n    encoder_hidden_states=encoder_hidden_states,\n    layer_head_mask=head_mask[idx],\n)",
        "4.57.6",
    );
    assert_eq!(
        got,
        "        for idx, decoder_layer in enumerate(self.layers):\n            layer_outputs = decoder_layer(\n                hidden_states,\n                causal_mask,\n                encoder_hidden_states,\n                None,\n                head_mask[idx],\n            )\n"
    );
}

#[test]
fn nested_parentheses_in_an_argument_do_not_end_the_call() {
    let got = patched_call(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(hidden_states, attention_mask=f(g(x), (y)), use_cache=(a if b else (c)))",
        "4.57.6",
    );
    assert!(
        got.contains("decoder_layer(hidden_states, f(g(x), (y)), None, None, None, None, None, False, (a if b else (c)))"),
        "{got}"
    );
}

#[test]
fn a_comment_inside_the_call_stays_with_its_argument() {
    let got = patched_call(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(\n    hidden_states,\n    # the mask built above\n    attention_mask=causal_mask,  # causal\n    encoder_hidden_states=encoder_hidden_states\n)",
        "4.57.6",
    );
    assert_eq!(
        got,
        "        for idx, decoder_layer in enumerate(self.layers):\n            layer_outputs = decoder_layer(\n                hidden_states,\n                # the mask built above\n                causal_mask,  # causal\n                encoder_hidden_states\n            )\n"
    );
}

#[test]
fn keywords_out_of_order_land_in_signature_order() {
    let got = patched_call(
        SIGNATURE_4_57,
        "out = decoder_layer(h, encoder_hidden_states=enc, attention_mask=mask,)",
        "4.57.6",
    );
    assert!(got.contains("out = decoder_layer(h, mask, enc,)"), "{got}");
}

#[test]
fn a_trailing_kwargs_splat_stays_at_the_end_on_5x() {
    let got = patched_call(
        SIGNATURE_5,
        "hidden_states = decoder_layer(\n    hidden_states,\n    causal_mask,\n    encoder_hidden_states,\n    encoder_attention_mask=None,\n    cache=cache if use_cache else None,\n    use_cache=use_cache,\n    **kwargs,\n)",
        "5.25.0",
    );
    assert_eq!(
        got,
        "        for idx, decoder_layer in enumerate(self.layers):\n            hidden_states = decoder_layer(\n                hidden_states,\n                causal_mask,\n                encoder_hidden_states,\n                None,\n                cache if use_cache else None,\n                use_cache,\n                **kwargs,\n            )\n"
    );
}

#[test]
fn a_splat_that_could_supply_a_skipped_parameter_is_refused() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = module(
        SIGNATURE_5,
        "hidden_states = decoder_layer(hidden_states, encoder_hidden_states=e, **kwargs)",
    );
    let err = patch(
        &whisper_rule(),
        &versions(&["transformers=5.25.0"]),
        PATH,
        &source,
    )
    .unwrap_err();
    insta::assert_snapshot!(render(&err));
}

#[test]
fn a_keyword_the_signature_lacks_is_refused() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = module(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(hidden_states, position_bias=bias)",
    );
    let err = patch(
        &whisper_rule(),
        &versions(&["transformers=4.57.6"]),
        PATH,
        &source,
    )
    .unwrap_err();
    // Exit codes belong to the CLI; a refusal is an action error, which it maps to 3.
    assert_eq!(err.kind(), "action");
    insta::assert_snapshot!(render(&err));
}

#[test]
fn the_version_gate_skips_older_releases() {
    let source = module(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(h, attention_mask=m)",
    );
    let out = patch(
        &whisper_rule(),
        &versions(&["transformers=4.51.3"]),
        PATH,
        &source,
    )
    .unwrap();
    assert_eq!(out.output, source);
    assert_eq!(out.rules[0].status, regraft::engine::RuleStatus::Inactive);
}

#[test]
fn the_encoder_loop_is_not_touched() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = module(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(h, attention_mask=m)",
    )
    .replace("class WhisperDecoder(", "class WhisperEncoder(");
    let err = patch(
        &whisper_rule(),
        &versions(&["transformers=4.57.6"]),
        PATH,
        &source,
    )
    .unwrap_err();
    insta::assert_snapshot!(render(&err));
}

#[test]
fn the_shipped_example_patches_as_expected() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = include_str!("../examples/whisper/modeling_whisper.py");
    let path = "examples/whisper/modeling_whisper.py";
    let out = patch(
        &whisper_rule(),
        &versions(&["transformers=4.57.6"]),
        path,
        source,
    )
    .unwrap();
    insta::assert_snapshot!("example_patched", out.output);
    insta::assert_snapshot!(
        "example_diff",
        regraft::report::unified_diff(path, source, &out.output)
    );
    let again = patch(
        &whisper_rule(),
        &versions(&["transformers=4.57.6"]),
        path,
        &out.output,
    )
    .unwrap();
    assert_eq!(again.output, out.output, "a second run changes nothing");
}

#[test]
fn keep_keyword_stops_positionals_at_the_first_kept_parameter() {
    let _snapshots = crate::util::snapshots(module_path!());
    let rule = crate::util::rules(
        &include_str!("../rules/whisper-decoder-layer-positional.yaml").replace(
            "    signature: WhisperDecoderLayer.forward\n",
            "    signature: WhisperDecoderLayer.forward\n    keep_keyword: [use_cache, past_key_values]\n",
        ),
    );
    let source = module(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(\n    hidden_states,\n    attention_mask=causal_mask,\n    layer_head_mask=head_mask[idx],\n    past_key_values=past_key_values,\n    output_attentions=output_attentions,\n    use_cache=use_cache,\n)",
    );
    let out = patch(&rule, &versions(&["transformers=4.57.6"]), PATH, &source).unwrap();
    let start = out.output.find("            layer_outputs").unwrap();
    insta::assert_snapshot!(&out.output[start..]);
}

#[test]
fn preserve_lines_refuses_an_edit_that_would_add_a_line() {
    let _snapshots = crate::util::snapshots(module_path!());
    let yaml = include_str!("../rules/whisper-decoder-layer-positional.yaml").to_string()
        + "preserve_lines: true\n";
    let rule = crate::util::rules(&yaml);
    let env = versions(&["transformers=4.57.6"]);
    // One argument per line, and a skipped parameter to fill: one more line.
    let tall = module(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(\n    hidden_states,\n    attention_mask=causal_mask,\n    layer_head_mask=head_mask[idx],\n)",
    );
    let err = patch(&rule, &env, PATH, &tall).unwrap_err();
    insta::assert_snapshot!(render(&err));
    // On one line the same call fits.
    let flat = module(
        SIGNATURE_4_57,
        "layer_outputs = decoder_layer(hidden_states, attention_mask=causal_mask, layer_head_mask=head_mask[idx])",
    );
    let out = patch(&rule, &env, PATH, &flat).unwrap();
    assert_eq!(out.output.lines().count(), flat.lines().count());
    assert!(
        out.output
            .contains("decoder_layer(hidden_states, causal_mask, None, None, head_mask[idx])")
    );
}

#[test]
fn on_refuse_warn_leaves_a_refused_site_alone_and_patches_the_others() {
    let source = "class Layer:\n    def forward(self, x, mask=None):\n        return x\n\n\nclass Model:\n    def forward(self):\n        for _, layer in enumerate(self.layers):\n            out = layer(x, mask=m)\n        for _, layer in enumerate(self.layers):\n            out = layer(x, bias=b)\n";
    let rule = "id: r\non_refuse: warn\ninside:\n  class: Model\n  loop: \"for $_, $L in enumerate(self.layers)\"\nmatch: \"out = $L($$$A)\"\naction:\n  kwargs_to_positional: {signature: Layer.forward}\nexpect: 2\n";
    let out = patch(&crate::util::rules(rule), &versions(&[]), "m.py", source).unwrap();
    assert!(out.output.contains("out = layer(x, m)"), "{}", out.output);
    assert!(
        out.output.contains("out = layer(x, bias=b)"),
        "{}",
        out.output
    );
    assert_eq!(out.warnings.len(), 1);
    assert!(out.warnings[0].to_string().contains("`bias`"));
    let refused: Vec<_> = out.rules[0]
        .matches
        .iter()
        .filter_map(|m| m.refused.as_deref())
        .collect();
    assert_eq!(refused, ["`Layer.forward` has no parameter `bias`"]);
    let skip = rule.replace("on_refuse: warn", "on_refuse: skip");
    assert!(
        patch(&crate::util::rules(&skip), &versions(&[]), "m.py", source)
            .unwrap()
            .warnings
            .is_empty()
    );
    let error = rule.replace("on_refuse: warn\n", "");
    assert_eq!(
        patch(&crate::util::rules(&error), &versions(&[]), "m.py", source)
            .unwrap_err()
            .kind(),
        "action"
    );
}
