//! Reachability (`reached_from`, `regraft reach`): whether a release's own code calls the
//! function a rule edits, through every shape of call the search claims to follow, and a
//! precise `unreached` (with the calls it could not follow) where none does.

use crate::util::{regraft, root, text};
use std::fs;
use std::path::Path;

/// Writes `files` (path, text) under a new folder.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (path, body) in files {
        let file = dir.path().join(path);
        fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
        fs::write(file, body).expect("a fixture file");
    }
    dir
}

/// `regraft reach DIR --from ENTRY --to TARGET`: exit code and stdout.
fn reach(dir: &Path, from: &[&str], to: &str) -> (Option<i32>, String) {
    let mut args = vec!["reach".to_string(), dir.display().to_string()];
    for f in from {
        args.push("--from".into());
        args.push((*f).into());
    }
    args.push("--to".into());
    args.push(to.into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = regraft(&args, root());
    (out.status.code(), text(&out.stdout))
}

/// The first line of a reached verdict: the chain of calls.
fn reached(dir: &Path, from: &str, to: &str) -> String {
    let (code, out) = reach(dir, &[from], to);
    assert_eq!(code, Some(0), "{from} → {to}: {out}");
    out.lines().next().unwrap_or_default().to_string()
}

fn unreached(dir: &Path, from: &str, to: &str) -> String {
    let (code, out) = reach(dir, &[from], to);
    assert_eq!(code, Some(3), "{from} → {to}: {out}");
    out.lines().next().unwrap_or_default().to_string()
}

#[test]
fn the_mxfp4_loader_reaches_dequantize_on_4_57_and_not_on_5_0() {
    let fixtures = root().join("tests/fixtures/reach");
    assert_eq!(
        reached(
            &fixtures.join("mxfp4-4.57"),
            "transformers.modeling_utils.PreTrainedModel.from_pretrained",
            "transformers.integrations.mxfp4.dequantize"
        ),
        "reached: transformers.modeling_utils.PreTrainedModel.from_pretrained → transformers.modeling_utils.PreTrainedModel._load_pretrained_model → transformers.quantizers.quantizer_mxfp4.Mxfp4HfQuantizer.create_quantized_param → transformers.integrations.mxfp4.dequantize"
    );
    // 5.0 dispatches through conversion ops it builds at run time: the place is named.
    assert_eq!(
        unreached(
            &fixtures.join("mxfp4-5.0"),
            "transformers.modeling_utils.PreTrainedModel.from_pretrained",
            "transformers.integrations.mxfp4.dequantize"
        ),
        "unreached: no call from transformers.modeling_utils.PreTrainedModel.from_pretrained reaches transformers.integrations.mxfp4.dequantize; 2 call(s) on the way could not be followed: transformers/core_model_loading.py:2 `hf_quantizer.get_weight_conversions`, transformers/core_model_loading.py:4 `op.convert`"
    );
    // From the conversion op itself, the call graph is plain: `dequantize_convertops` runs.
    let five = fixtures.join("mxfp4-5.0");
    let convert = "transformers.integrations.mxfp4.Mxfp4Dequantize.convert";
    assert!(
        reached(
            &five,
            convert,
            "transformers.integrations.mxfp4.dequantize_convertops"
        )
        .starts_with("reached: ")
    );
    assert_eq!(
        unreached(&five, convert, "transformers.integrations.mxfp4.dequantize"),
        "unreached: no call from transformers.integrations.mxfp4.Mxfp4Dequantize.convert reaches transformers.integrations.mxfp4.dequantize"
    );
}

#[test]
fn the_matrix_shows_unreached_where_the_edit_applies_but_never_runs() {
    let dir = tree(&[(
        "rule.yaml",
        "id: mxfp4-fp32\nfiles: ['**/transformers/integrations/mxfp4.py']\ninside: {function: dequantize}\nmatch: 'dequantized = convert_moe_packed_tensors($B, $S)'\naction:\n  replace: 'dequantized = convert_moe_packed_tensors($B, $S, dtype=torch.float32)'\nreached_from: [transformers.modeling_utils.PreTrainedModel.from_pretrained]\nexpect: 1\n",
    )]);
    let fixtures = root().join("tests/fixtures/reach");
    let t457 = format!(
        "transformers=4.57.6:{}",
        fixtures.join("mxfp4-4.57").display()
    );
    let t50 = format!(
        "transformers=5.0.0:{}",
        fixtures.join("mxfp4-5.0").display()
    );
    let out = regraft(
        &[
            "matrix",
            "-r",
            "rule.yaml",
            "--target",
            &t457,
            "--target",
            &t50,
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let statuses: Vec<(&str, &str)> = rows
        .as_array()
        .or_else(|| rows["rows"].as_array())
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap_or(""),
                r["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("transformers==4.57.6", "ok"),
            ("transformers==5.0.0", "unreached")
        ]
    );
    // The same rule without `reached_from` holds on both: applying is not taking effect.
    fs::write(
        dir.path().join("rule.yaml"),
        fs::read_to_string(dir.path().join("rule.yaml"))
            .expect("the rule")
            .replace(
                "reached_from: [transformers.modeling_utils.PreTrainedModel.from_pretrained]\n",
                "",
            ),
    )
    .expect("the rule");
    let out = regraft(
        &[
            "matrix",
            "-r",
            "rule.yaml",
            "--target",
            &t457,
            "--target",
            &t50,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// A small package holding every shape of call the search follows.
const SHAPES: &[(&str, &str)] = &[
    ("pkg/__init__.py", "from .api import run as public_run\n"),
    (
        "pkg/api.py",
        r#"import functools

from . import ops
from .layers import Block, Base, Sub
from .registry import KERNELS


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@traced
def decorated():
    return ops.leaf_decorated()


def run(kind, base: Base):
    decorated()
    KERNELS[kind]()
    getattr(ops, "by_getattr")()
    base.forward(1)
    Block()(2)
    from .lazy import lazy_target
    lazy_target()
    ops.call_back(ops.given_as_callback)


def opaque(fn):
    fn()
    return ops.not_called_anywhere


def cycle_a():
    cycle_b()


def cycle_b():
    cycle_a()
"#,
    ),
    (
        "pkg/ops.py",
        r#"def leaf_decorated():
    pass


def by_getattr():
    pass


def given_as_callback():
    pass


def call_back(f):
    pass


def not_called_anywhere():
    pass


def kernel_a():
    pass


def kernel_b():
    pass
"#,
    ),
    (
        "pkg/registry.py",
        "from .ops import kernel_a, kernel_b\n\nKERNELS = {\"a\": kernel_a, \"b\": kernel_b}\n",
    ),
    ("pkg/lazy.py", "def lazy_target():\n    pass\n"),
    (
        "pkg/layers.py",
        r#"import torch.nn as nn


class Layer(nn.Module):
    def forward(self, x):
        return self.mlp_step(x)

    def mlp_step(self, x):
        return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
        self.helper = Helper()

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.helper.finish(x)


class Helper:
    def finish(self, x):
        return x


class Base(nn.Module):
    def forward(self, x):
        return x


class Sub(Base):
    def forward(self, x):
        return super().forward(x) + self.sub_only()

    def sub_only(self):
        return 0

    VALUE = 1
"#,
    ),
];

#[test]
fn every_shape_of_call_the_search_claims_is_followed() {
    let dir = tree(SHAPES);
    let entry = "pkg.api.run";
    for target in [
        // a decorated function, and what it calls
        "pkg.api.decorated",
        "pkg.ops.leaf_decorated",
        // a literal registry, `getattr` with a literal, a lazy import in the function
        "pkg.ops.kernel_a",
        "pkg.ops.kernel_b",
        "pkg.ops.by_getattr",
        "pkg.lazy.lazy_target",
        // a function passed as a value: called back
        "pkg.ops.given_as_callback",
        // an override in a subclass of an annotated parameter's class, and `super()`
        "pkg.layers.Sub.forward",
        "pkg.layers.Base.forward",
        "pkg.layers.Sub.sub_only",
        // an instance called (torch's __call__ runs forward), a ModuleList's items, `self.x`
        "pkg.layers.Block.forward",
        "pkg.layers.Layer.forward",
        "pkg.layers.Layer.mlp_step",
        "pkg.layers.Helper.finish",
    ] {
        assert!(
            reached(dir.path(), entry, target).starts_with("reached: pkg.api.run"),
            "{target}"
        );
    }
    // A package's re-export names the same function.
    assert!(
        reached(dir.path(), "pkg.public_run", "pkg.ops.kernel_a")
            .starts_with("reached: pkg.api.run")
    );
    // A site: a file and a line inside the function.
    assert!(reached(dir.path(), entry, "pkg/layers.py:9").ends_with("pkg.layers.Layer.mlp_step"));
}

#[test]
fn what_no_call_reaches_is_unreached_and_a_call_it_cannot_follow_is_named() {
    let dir = tree(SHAPES);
    // Referenced (returned) is not called: `opaque` calls a parameter, named with its place.
    assert_eq!(
        unreached(dir.path(), "pkg.api.opaque", "pkg.ops.not_called_anywhere"),
        "unreached: no call from pkg.api.opaque reaches pkg.ops.not_called_anywhere; 1 call(s) on the way could not be followed: pkg/api.py:32 `fn`"
    );
    // A cycle ends, and reaches nothing else.
    assert_eq!(
        unreached(dir.path(), "pkg.api.cycle_a", "pkg.ops.kernel_a"),
        "unreached: no call from pkg.api.cycle_a reaches pkg.ops.kernel_a"
    );
    // An entry the release does not define is said, not taken as reaching nothing quietly.
    assert_eq!(
        unreached(dir.path(), "pkg.api.gone", "pkg.ops.kernel_a"),
        "unreached: no call from pkg.api.gone reaches pkg.ops.kernel_a; this release does not define pkg.api.gone"
    );
    let (code, out) = reach(dir.path(), &["pkg.api.run"], "pkg.ops.nothing_here");
    assert_eq!(
        (code, out.trim()),
        (
            Some(3),
            "unreached: this release does not define pkg.ops.nothing_here"
        )
    );
}

#[test]
fn hostile_trees_end_with_a_verdict() {
    // Non-UTF-8 bytes, a module importing itself, a class its own base, a deep chain of
    // assignments and a symbolic link loop.
    let mut chain = String::from("def target():\n    pass\n\nv0 = target\n");
    for i in 1..400 {
        chain.push_str(&format!("v{i} = v{}\n", i - 1));
    }
    chain.push_str("\n\ndef entry():\n    v399()\n");
    let dir = tree(&[
        ("h/__init__.py", ""),
        ("h/chain.py", &chain),
        (
            "h/selfimport.py",
            "from .selfimport import f as g\n\nclass C(C):\n    def m(self):\n        g()\n\n\ndef f():\n    C().m()\n",
        ),
    ]);
    fs::write(
        dir.path().join("h/latin1.py"),
        b"# \xe9t\xe9\ndef f():\n    pass\n",
    )
    .expect("a file");
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path(), dir.path().join("h/loop")).expect("a link");
    let (code, out) = reach(dir.path(), &["h.selfimport.f"], "h.latin1.f");
    assert_eq!(code, Some(3), "{out}");
    // A chain longer than the search follows is reached or unreached, never a hang or a crash.
    let (code, _) = reach(dir.path(), &["h.chain.entry"], "h.chain.target");
    assert!(matches!(code, Some(0 | 3)));
    assert!(reached(dir.path(), "h.latin1.f", "h.latin1.f").starts_with("reached: "));
}

#[test]
fn reached_from_is_read_checked_and_written_back() {
    let dir = tree(&[(
        "bad.yaml",
        "id: bad\nmatch: f()\nreached_from: [not-dotted]\n",
    )]);
    let out = regraft(&["lint", "-r", "bad.yaml"], dir.path());
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("`not-dotted` is not a dotted name"), "{all}");
    fs::write(
        dir.path().join("good.yaml"),
        "id: good\nmatch: f()\nreached_from: [pkg.mod.entry]\n",
    )
    .expect("a rule");
    let out = regraft(&["fmt", "good.yaml", "--to", "dsl"], dir.path());
    let dsl = text(&out.stdout);
    assert!(dsl.contains("pkg.mod.entry"), "{dsl}{}", text(&out.stderr));
}

#[test]
fn apply_verify_fails_a_rule_whose_edit_no_entry_point_reaches() {
    let dir = tree(&[(
        "rule.yaml",
        "id: mxfp4-fp32\nfiles: ['**/transformers/integrations/mxfp4.py']\ninside: {function: dequantize}\nmatch: 'dequantized = convert_moe_packed_tensors($B, $S)'\naction:\n  replace: 'dequantized = convert_moe_packed_tensors($B, $S, dtype=torch.float32)'\nreached_from: [transformers.modeling_utils.PreTrainedModel.from_pretrained]\nexpect: 1\n",
    )]);
    let rule = dir.path().join("rule.yaml");
    let rule = rule.to_str().expect("a UTF-8 path");
    let fixtures = root().join("tests/fixtures/reach");
    // Named from inside the release, relative: the release is found above the file.
    let out = regraft(
        &["apply", "--verify", "-r", rule, "transformers"],
        &fixtures.join("mxfp4-4.57"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = regraft(
        &["apply", "--verify", "-r", rule, "transformers"],
        &fixtures.join("mxfp4-5.0"),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: drift: rule `mxfp4-fp32` is unreached in ")
            && stderr.contains(": no call from transformers.modeling_utils.PreTrainedModel.from_pretrained reaches transformers.integrations.mxfp4.dequantize; 2 call(s) on the way could not be followed: transformers/core_model_loading.py:2 `hf_quantizer.get_weight_conversions`, transformers/core_model_loading.py:4 `op.convert`"),
        "{stderr}"
    );
    // `--check` and `--diff` say whether it applies, as before: reachability is `--verify`'s.
    let out = regraft(
        &["apply", "--diff", "-r", rule, "transformers"],
        &fixtures.join("mxfp4-5.0"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
