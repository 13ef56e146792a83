//! The attribute check: what a template newly reads of `self` must exist on the class in the
//! release the file belongs to — defined or assigned by the class or its bases there, guarded
//! by the edit, or declared in `provides` — else the edit is refused naming the attribute.

use crate::util::{regraft, text};
use std::fs;
use std::path::Path;

const BASE: &str = "class BaseTrainer:\n    def __init__(self, args):\n        self.args = args\n";

/// A release `trl/` under `dir` whose `GRPOTrainer` has `init` in its `__init__` body and
/// `extra` in its class body.
fn release(dir: &Path, init: &str, extra: &str) {
    let pkg = dir.join("trl/trainer");
    fs::create_dir_all(&pkg).unwrap();
    fs::write(dir.join("trl/__init__.py"), "").unwrap();
    fs::write(pkg.join("__init__.py"), "").unwrap();
    fs::write(pkg.join("base.py"), BASE).unwrap();
    fs::write(
        pkg.join("grpo_trainer.py"),
        format!(
            "from .base import BaseTrainer\n\n\nclass GRPOTrainer(BaseTrainer):\n{extra}    def __init__(self, args, processing_class=None):\n        super().__init__(args)\n{init}\n    def _generate(self, prompts):\n        inputs = self.tokenize(prompts)\n        return inputs\n\n    def tokenize(self, prompts, **kw):\n        return prompts\n"
        ),
    )
    .unwrap();
}

/// `regraft apply --diff` of a rule replacing the tokenize call with `template` on the release.
fn apply(dir: &Path, template: &str, extra_keys: &str) -> (Option<i32>, String, String) {
    fs::write(
        dir.join("r.yaml"),
        format!(
            "id: grpo-image-token\nfiles: ['**/trl/trainer/grpo_trainer.py']\ninside: {{class: GRPOTrainer, function: _generate}}\nmatch: 'inputs = self.tokenize($P)'\naction:\n  replace: '{template}'\n{extra_keys}expect: 1\n"
        ),
    )
    .unwrap();
    let out = regraft(&["apply", "--diff", "-r", "r.yaml", "trl"], dir);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

const READS: &str = "inputs = self.tokenize($P, image_token_id=self.image_token_id)";

#[test]
fn a_rewrite_for_a_newer_release_is_refused_on_one_whose_class_lacks_the_attribute() {
    let new = tempfile::tempdir().unwrap();
    release(
        new.path(),
        "        self.image_token_id = getattr(processing_class, \"image_token_id\", None)\n",
        "",
    );
    let (code, diff, stderr) = apply(new.path(), READS, "");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        diff.contains(
            "+        inputs = self.tokenize(prompts, image_token_id=self.image_token_id)"
        ),
        "{diff}"
    );

    let old = tempfile::tempdir().unwrap();
    release(old.path(), "", "");
    let (code, diff, stderr) = apply(old.path(), READS, "");
    assert_eq!(code, Some(3), "{stderr}");
    assert!(diff.is_empty(), "{diff}");
    let said = crate::util::words(&stderr);
    assert!(
        said.contains("regraft::result::attribute")
            && said.contains("patching trl/trainer/grpo_trainer.py would read an attribute the class does not have (the edit reads `self.image_token_id`, which no class of `GRPOTrainer`'s resolution order in this release defines or assigns (searched trl.trainer.grpo_trainer.GRPOTrainer, trl.trainer.base.BaseTrainer): an AttributeError when it runs; where the runtime sets it, declare it in `provides`); nothing was written"),
        "{said}"
    );
    // Declared as the runtime's, guarded in the template, or read already: not refused.
    assert_eq!(
        apply(old.path(), READS, "provides: [image_token_id]\n").0,
        Some(0)
    );
    let guarded = "inputs = self.tokenize($P, image_token_id=getattr(self, \"image_token_id\", None) and self.image_token_id)";
    assert_eq!(apply(old.path(), guarded, "").0, Some(0));
}

#[test]
fn every_way_a_class_may_have_an_attribute_counts() {
    for (init, extra, attribute) in [
        // a base's assignment, through a relative import
        ("", "", "args"),
        // a class-level name, a dataclass field without a value, a method, a property
        ("", "    limit = 4\n", "limit"),
        ("", "    width: int\n", "width"),
        ("", "", "tokenize"),
        (
            "",
            "    @property\n    def size(self):\n        return 1\n\n",
            "size",
        ),
        // `setattr` with a literal name, and with a computed one (any attribute)
        ("        setattr(self, \"flag\", True)\n", "", "flag"),
        (
            "        for k in processing_class:\n            setattr(self, k, 1)\n",
            "",
            "anything",
        ),
        // `__getattr__` answers every name
        (
            "",
            "    def __getattr__(self, name):\n        return None\n\n",
            "whatever",
        ),
        // a nested class
        ("", "    class Options:\n        pass\n\n", "Options"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        release(dir.path(), init, extra);
        let template = format!("inputs = self.tokenize($P, value=self.{attribute})");
        let (code, _, stderr) = apply(dir.path(), &template, "");
        assert_eq!(code, Some(0), "{attribute}: {stderr}");
    }
}

#[test]
fn a_base_outside_the_release_leaves_the_attribute_unknown_and_the_edit_stands() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("m");
    fs::create_dir_all(&pkg).unwrap();
    fs::write(pkg.join("__init__.py"), "").unwrap();
    // torch's `nn.Module` (not in the tree) may set `training`; a base-less class may not.
    fs::write(
        pkg.join("layer.py"),
        "import torch.nn as nn\n\n\nclass Layer(nn.Module):\n    def forward(self, x):\n        return f(x)\n\n\nclass Plain:\n    def forward(self, x):\n        return f(x)\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("r.yaml"),
        "id: train-flag\nfiles: ['**/m/layer.py']\nmatch: 'return f($X)'\naction:\n  replace: 'return f($X, self.training)'\nexpect: 2\n",
    )
    .unwrap();
    let out = regraft(&["apply", "--diff", "-r", "r.yaml", "m"], dir.path());
    assert_eq!(out.status.code(), Some(3));
    let said = crate::util::words(&text(&out.stderr));
    assert!(
        said.contains("the edit reads `self.training`, which no class of `Plain`'s resolution order in this release defines or assigns (searched m.layer.Plain)"),
        "{said}"
    );
    fs::write(
        dir.path().join("r.yaml"),
        "id: train-flag\nfiles: ['**/m/layer.py']\ninside: {class: Layer}\nmatch: 'return f($X)'\naction:\n  replace: 'return f($X, self.training)'\nexpect: 1\n",
    )
    .unwrap();
    let out = regraft(&["apply", "--diff", "-r", "r.yaml", "m"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn what_is_not_a_new_read_of_the_instance_is_not_asked() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("m");
    fs::create_dir_all(&pkg).unwrap();
    fs::write(pkg.join("__init__.py"), "").unwrap();
    fs::write(
        pkg.join("a.py"),
        "class A:\n    def run(self, x):\n        y = self.gone\n        return g(x)\n\n    @staticmethod\n    def s(self):\n        return g(1)\n\n\ndef free(self):\n    return g(2)\n\n\nclass B:\n    def run(this, x):\n        return g(x)\n",
    )
    .unwrap();
    // The replaced text already read `gone` (not new); a static method's or a function's
    // first parameter is not an instance; an assignment writes, it does not read.
    for (rule, code) in [
        (
            "match: 'y = self.gone'\naction:\n  replace: 'y = self.gone or 0'\nexpect: 1\n",
            0,
        ),
        (
            "inside: {function: s}\nmatch: 'return g($X)'\naction:\n  replace: 'return g($X, self.nothing)'\nexpect: 1\n",
            0,
        ),
        (
            "inside: {function: free}\nmatch: 'return g($X)'\naction:\n  replace: 'return g($X, self.nothing)'\nexpect: 1\n",
            0,
        ),
        (
            "inside: {class: A, function: run}\nmatch: 'return g($X)'\naction:\n  replace: 'self.made = g($X)'\nexpect: 1\n",
            0,
        ),
        // the instance under another name is asked all the same
        (
            "inside: {class: B}\nmatch: 'return g($X)'\naction:\n  replace: 'return g($X, this.nothing)'\nexpect: 1\n",
            3,
        ),
    ] {
        fs::write(
            dir.path().join("r.yaml"),
            format!("id: r\nfiles: ['**/m/a.py']\n{rule}"),
        )
        .unwrap();
        let out = regraft(&["apply", "--diff", "-r", "r.yaml", "m"], dir.path());
        assert_eq!(
            out.status.code(),
            Some(code),
            "{rule}: {}",
            text(&out.stderr)
        );
    }
}
