//! `match: {any: [...]}` alternatives that carry their own action: each site gets the action of
//! the first alternative that matches it, which may use what that alternative alone binds.

use crate::util::{patch, render, round_trip, rule_error, rules, versions, words};

fn run(rule: &str, source: &str) -> Result<String, String> {
    let set = rules(rule);
    match patch(&set, &versions(&[]), "m.py", source) {
        Ok(out) => {
            // The output is recognised as applied (`expect` holds on it) and is a fixed point.
            let again = patch(&set, &versions(&[]), "m.py", &out.output)
                .unwrap_or_else(|e| panic!("second run: {}", render(&e)));
            assert_eq!(again.output, out.output, "not a fixed point");
            Ok(out.output)
        }
        Err(e) => Err(words(&render(&e))),
    }
}

const SHAPES: &str = r#"id: loss-shapes
match:
  any:
    - match: "loss = F.cross_entropy($L.view(-1, $V), $T.view(-1))"
      action: {replace: "loss = fused_ce($L, $T, vocab=$V)"}
    - match: "loss = F.cross_entropy($L, $T)"
      action: {replace: "loss = fused_ce($L, $T)"}
    - "loss = loss_fct($L, $T, ignore_index=$I)"
action: {replace: "loss = fused_ce($L, $T, ignore_index=$I)"}
provides: [fused_ce]
expect: 3
"#;

#[test]
fn each_site_takes_the_action_of_the_alternative_that_matched_it() {
    let source = "import torch.nn.functional as F\ndef a(logits, labels, loss_fct):\n    loss = F.cross_entropy(logits.view(-1, 32000), labels.view(-1))\n    loss = F.cross_entropy(logits, labels)\n    loss = loss_fct(logits, labels, ignore_index=-100)\n    return loss\n";
    assert_eq!(
        run(SHAPES, source).unwrap(),
        "import torch.nn.functional as F\ndef a(logits, labels, loss_fct):\n    loss = fused_ce(logits, labels, vocab=32000)\n    loss = fused_ce(logits, labels)\n    loss = fused_ce(logits, labels, ignore_index=-100)\n    return loss\n",
        "the first alternative that matches wins: the `.view` shape is not the plain one's"
    );
}

#[test]
fn an_alternative_may_use_only_what_it_or_every_alternative_binds() {
    // `$V` is bound by the first alternative alone: the second cannot write it.
    let rule = SHAPES.replace("fused_ce($L, $T)\"", "fused_ce($L, $T, vocab=$V)\"");
    let e = words(&rule_error(&rule));
    assert!(e.contains("$V") || e.contains("`V`"), "{e}");
}

#[test]
fn alternatives_without_an_action_need_the_rules() {
    let rule = SHAPES.replace(
        "action: {replace: \"loss = fused_ce($L, $T, ignore_index=$I)\"}\n",
        "",
    );
    let e = words(&rule_error(&rule));
    assert!(
        e.contains("this alternative has no `action` and the rule has none"),
        "{e}"
    );
    // With every alternative carrying one, the rule needs none.
    let all = "id: r\nmatch:\n  any:\n    - {match: 'a($X)', action: {replace: 'b($X)'}}\n    - {match: 'c($X, $Y, k=$K)', action: {remove_kwargs: [k]}}\n";
    assert_eq!(run(all, "a(1)\nc(1, 2, k=3)\n").unwrap(), "b(1)\nc(1, 2)\n");
}

#[test]
fn an_alternatives_action_is_one_that_edits_at_its_match() {
    for action in ["check: {}", "rename: {from: a, to: b}"] {
        let rule = format!(
            "id: r\nmatch:\n  any:\n    - {{match: 'a($X)', action: {{{action}}}}}\n    - 'c($X)'\naction: {{replace: 'd($X)'}}\n"
        );
        let e = words(&rule_error(&rule));
        assert!(e.contains("acts for the whole rule"), "{action}: {e}");
    }
    // A `def` action on an alternative that is no `def` is refused at that alternative.
    let rule = "id: r\nmatch:\n  any:\n    - 'def f($$$P): $$$B'\n    - {match: 'g($X)', action: {add_decorator: 'x'}}\naction: {add_decorator: 'y'}\n";
    let e = rule_error(rule);
    assert!(words(&e).contains("add_decorator"), "{e}");
    assert!(
        e.contains("g($X)"),
        "the error points at the alternative: {e}"
    );
}

#[test]
fn alternatives_that_are_statement_runs_carry_their_own_templates() {
    let rule = "id: r\nprovides: [fused_head]\nmatch:\n  any:\n    - match: |\n        logits = self.lm_head($H)\n        logits = logits.float()\n      action: {replace: 'logits = fused_head($H)'}\n    - match: 'logits = self.lm_head($H)'\n      action: {replace: 'logits = fused_head($H, upcast=False)'}\n";
    let source = "def f(self, h):\n    logits = self.lm_head(h)\n    logits = logits.float()\n    return logits\ndef g(self, h):\n    logits = self.lm_head(h)\n    return logits\n";
    assert_eq!(
        run(rule, source).unwrap(),
        "def f(self, h):\n    logits = fused_head(h)\n    return logits\ndef g(self, h):\n    logits = fused_head(h, upcast=False)\n    return logits\n"
    );
}

#[test]
fn ordered_keywords_decide_the_alternative_as_they_decided_the_match() {
    let rule = "id: r\nordered: true\nmatch:\n  any:\n    - {match: 'f(a=$A, b=$B)', action: {replace: 'ab($A, $B)'}}\n    - {match: 'f(b=$B, a=$A)', action: {replace: 'ba($B, $A)'}}\n";
    assert_eq!(
        run(rule, "f(b=1, a=2)\nf(a=3, b=4)\n").unwrap(),
        "ba(1, 2)\nab(3, 4)\n"
    );
}

#[test]
fn alternatives_with_actions_round_trip_through_both_syntaxes() {
    let trip = round_trip(SHAPES);
    assert_eq!(trip.rules[0].branch_actions.iter().flatten().count(), 2);
    assert!(trip.dsl.contains("action"), "{}", trip.dsl);
}
