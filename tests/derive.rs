//! `derive_class`: a subclass generated from a class's `__init__` signature and docstring, as a
//! patcher builds one per trainer; judged by CPython (the output compiles and the derived class
//! forwards every argument to the original).

use crate::util::{patch, render, rule_error, rules, versions, words};

const RULE: &str = r#"id: derive
inside: {class: DPOTrainer}
match: "def __init__($$$P): $$$B"
action:
  derive_class:
    name: "Unsloth${class}"
    parameters: "unsloth_num_chunks: int = -1"
    before_super: |
      if args is None:
          args = DPOConfig()
    after_super: "self.unsloth_num_chunks = unsloth_num_chunks"
expect: 1
"#;

const TRAINER: &str = "from typing import Optional\n\n\nclass Trainer:\n    def __init__(self, *args, **kwargs):\n        self.got = (args, kwargs)\n\n\nclass DPOConfig:\n    pass\n\n\nclass DPOTrainer(Trainer):\n    \"\"\"Trainer for DPO.\n\n    Args:\n        model: the model.\n    \"\"\"\n\n    def __init__(\n        self,\n        model: Optional[str] = None,\n        ref_model=None,  # the reference\n        args: Optional[DPOConfig] = None,\n        /,\n        beta=0.1,\n        *extra,\n        callbacks=None,\n        **kwargs,\n    ):\n        super().__init__(model, ref_model, args, beta, *extra, callbacks=callbacks, **kwargs)\n\n\ndef helper():\n    return 1\n";

fn run(rule: &str, source: &str) -> Result<String, String> {
    let set = rules(rule);
    let out = patch(&set, &versions(&[]), "trainer.py", source).map_err(|e| words(&render(&e)))?;
    let again = patch(&set, &versions(&[]), "trainer.py", &out.output)
        .unwrap_or_else(|e| panic!("second run: {}", render(&e)));
    assert_eq!(again.output, out.output, "not a fixed point");
    Ok(out.output)
}

#[test]
fn the_derived_class_takes_the_signature_and_forwards_every_argument() {
    let out = run(RULE, TRAINER).unwrap();
    assert!(
        out.contains("class UnslothDPOTrainer(DPOTrainer):\n    \"\"\"Trainer for DPO.\n"),
        "{out}"
    );
    assert!(out.contains("        callbacks=None,\n        unsloth_num_chunks: int = -1,\n        **kwargs,\n    ):\n"), "{out}");
    assert!(
        out.ends_with("\n\n\ndef helper():\n    return 1\n"),
        "placed after the class: {out}"
    );
    // CPython judges: each argument reaches the original as it would have without the subclass.
    let script = format!(
        "{out}\nd = UnslothDPOTrainer('m', 'r', None, 0.5, 7, 8, callbacks=[1], other=2, unsloth_num_chunks=4)\nb = DPOTrainer('m', 'r', DPOConfig(), 0.5, 7, 8, callbacks=[1], other=2)\nassert d.got[0][:2] == b.got[0][:2] and d.got[0][3:] == b.got[0][3:], (d.got, b.got)\nassert type(d.got[0][2]) is DPOConfig and d.got[1] == b.got[1], d.got\nassert d.unsloth_num_chunks == 4 and UnslothDPOTrainer.__doc__ == DPOTrainer.__doc__\nprint('ok')\n"
    );
    let run = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "ok",
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn what_cannot_be_derived_is_refused() {
    // A name the module already binds to something else.
    let taken = TRAINER.replace(
        "def helper():",
        "UnslothDPOTrainer = None\n\n\ndef helper():",
    );
    assert!(
        run(RULE, &taken)
            .unwrap_err()
            .contains("already binds `UnslothDPOTrainer`")
    );
    // A parameter the method already takes.
    let clash = RULE.replace("unsloth_num_chunks: int = -1", "beta=0.2");
    assert!(
        run(&clash, TRAINER)
            .unwrap_err()
            .contains("already takes `beta`")
    );
    // Another method than `__init__`, a nested class.
    let forward = RULE.replace("def __init__", "def helper2");
    let source = TRAINER.replace("    def __init__(\n", "    def helper2(\n");
    assert!(
        run(&forward, &source)
            .unwrap_err()
            .contains("derives a class from its `__init__`")
    );
    let nested = format!(
        "def make():\n{}",
        TRAINER
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    assert!(run(RULE, &nested).is_err());
    // A default that reads a name only the class body sees: the name check refuses it.
    let class_level = TRAINER.replace(
        "    def __init__(\n        self,\n",
        "    LIMIT = 3\n\n    def __init__(\n        self,\n        limit=LIMIT,\n",
    );
    let e = run(RULE, &class_level).unwrap_err();
    assert!(e.contains("LIMIT") && e.contains("not a constant"), "{e}");
    // Even where the module binds it too: at module level it would read another binding.
    let shadowed = format!("LIMIT = 'module'\n{class_level}");
    assert!(run(RULE, &shadowed).unwrap_err().contains("not a constant"));
    // A decorated `__init__` is called through its decorator.
    let decorated = TRAINER.replace(
        "    def __init__(\n",
        "    @staticmethod\n    def __init__(\n",
    );
    assert!(run(RULE, &decorated).unwrap_err().contains("decorated"));
    // Parameters that are not plain parameters with defaults, where the rule is read.
    for bad in ["x", "*args", "a=1, **k", "$X=1"] {
        let e = words(&rule_error(
            &RULE.replace("unsloth_num_chunks: int = -1", bad),
        ));
        assert!(e.contains("invalid `parameters`"), "{bad}: {e}");
    }
}
