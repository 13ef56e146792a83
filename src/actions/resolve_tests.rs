use super::*;
use crate::modules::MapModules;
use crate::python::parse;

fn modules(entries: &[(&str, &str)]) -> MapModules {
    MapModules {
        current: "pkg.b.mod_b".to_string(),
        current_is_package: false,
        sources: entries
            .iter()
            .map(|(k, v)| (k.to_string(), Arc::from(*v)))
            .collect(),
    }
}

/// The parameter names `name` resolves to in `file` (module `pkg.b.mod_b`), or the error.
fn lookup(file: &str, others: &[(&str, &str)], name: &str) -> Result<Vec<String>, LookupError> {
    let map = modules(others);
    let tree = parse(file);
    let mut sigs = Signatures::new("pkg.b.mod_b", None, Some(&map));
    sigs.get(tree.root_node(), file, name)
        .clone()
        .map(|s| s.params.iter().map(|p| p.name.clone()).collect())
}

fn refusal(result: Result<Vec<String>, LookupError>) -> String {
    match result {
        Err(LookupError::Refused { reason }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn follows_bases_and_imports_into_other_modules() {
    let a = "class Base:\n    def forward(self, x, mask=None):\n        pass\n";
    let b = "from ..a.mod_a import Base as Parent\n\nclass Child(Parent):\n    pass\n";
    assert_eq!(
        lookup(b, &[("pkg.a.mod_a", a)], "Child.forward").unwrap(),
        ["x", "mask"]
    );
}

#[test]
fn a_missing_signature_names_every_place_searched() {
    let b = "from ..a.mod_a import Base\n\nclass Child(Base):\n    pass\n";
    let Err(LookupError::NotFound { searched }) = lookup(b, &[], "Child.forward") else {
        panic!("expected a failed lookup");
    };
    assert_eq!(
        searched,
        [
            "pkg.b.mod_b: imports `Base` from `..a.mod_a`: no module `pkg.a.mod_a` in the context",
            "base `Base` is not followed (its module is not searched), and it may define `forward`"
        ]
    );
}

#[test]
fn bases_are_searched_in_c3_order() {
    // D(B, C), B(A), C(A): Python finds C.f before A.f.
    let src = "class A:\n    def f(self, a): pass\nclass B(A): pass\nclass C(A):\n    def f(self, c): pass\nclass D(B, C): pass\n";
    assert_eq!(lookup(src, &[], "D.f").unwrap(), ["c"]);
    // Inconsistent bases: Python raises TypeError at class creation.
    let bad = "class A: pass\nclass B(A): pass\nclass C(A, B):\n    pass\n";
    assert!(refusal(lookup(bad, &[], "C.f")).contains("no consistent method resolution order"));
}

#[test]
fn an_unfollowed_base_is_never_read_past() {
    let src = "import torch.nn as nn\nclass M:\n    def forward(self, m): pass\nclass L(nn.Module, M): pass\n";
    let Err(LookupError::NotFound { searched }) = lookup(src, &[], "L.forward") else {
        panic!("an unfollowed base first in the order ends the search");
    };
    assert!(
        searched[1].starts_with("base `nn.Module` is not followed"),
        "{searched:?}"
    );
    // A single chain to the definer is exact whatever lies beyond it.
    let chain = "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, m): pass\nclass L(M): pass\n";
    assert_eq!(lookup(chain, &[], "L.forward").unwrap(), ["m"]);
    // Several bases and an unknown one somewhere: the order is not known.
    let diamond = "class U(Unknown): pass\nclass K:\n    def f(self, k): pass\nclass B(K): pass\nclass D(B, U): pass\n";
    assert!(refusal(lookup(diamond, &[], "D.f")).contains("depends on `Unknown`"));
}

#[test]
fn subscripted_and_module_attribute_bases_are_followed() {
    let a = "class Base:\n    def forward(self, x): pass\n";
    let src = "from ..a import mod_a\nfrom typing import Generic\nclass L(mod_a.Base, Generic[T]): pass\nclass G(mod_a.Base[int]): pass\n";
    let others = [("pkg.a.mod_a", a)];
    assert_eq!(lookup(src, &others, "L.forward").unwrap(), ["x"]);
    assert_eq!(lookup(src, &others, "G.forward").unwrap(), ["x"]);
}

#[test]
fn rebinding_in_the_class_or_the_module_is_followed_or_refused() {
    let later = "class L:\n    def forward(self, a): pass\n    def forward(self, b): pass\n";
    assert_eq!(lookup(later, &[], "L.forward").unwrap(), ["b"]);
    let assigned = "class L:\n    def forward(self, a): pass\n    forward = other\n";
    assert!(refusal(lookup(assigned, &[], "L.forward")).contains("`forward = other`"));
    let conditional = "class L(B):\n    if X:\n        def forward(self, a): pass\nclass B:\n    def forward(self, b): pass\n";
    assert!(refusal(lookup(conditional, &[], "L.forward")).contains("only under a condition"));
    let module = "class L:\n    def forward(self, a): pass\nclass O:\n    def forward(self, o): pass\nL = O\n";
    assert!(refusal(lookup(module, &[], "L.forward")).contains("`L = O`"));
    let redefined =
        "class L:\n    def forward(self, a): pass\nclass L:\n    def forward(self, z): pass\n";
    assert_eq!(lookup(redefined, &[], "L.forward").unwrap(), ["z"]);
}

#[test]
fn alternative_imports_must_agree() {
    let a = "class L:\n    def forward(self, x): pass\n";
    let b_same = "class L:\n    def forward(self, x): pass\n";
    let b_other = "class L:\n    def forward(self, y): pass\n";
    let src =
        "try:\n    from ..a.mod_a import L\nexcept ImportError:\n    from ..a.mod_c import L\n";
    assert_eq!(
        lookup(
            src,
            &[("pkg.a.mod_a", a), ("pkg.a.mod_c", b_same)],
            "L.forward"
        )
        .unwrap(),
        ["x"]
    );
    assert_eq!(
        lookup(
            src,
            &[("pkg.a.mod_a", a), ("pkg.a.mod_c", b_other)],
            "L.forward"
        ),
        Err(LookupError::Ambiguous(2))
    );
    // A later import shadows an earlier one.
    let shadow = "from ..a.mod_a import L\nfrom ..a.mod_c import L\n";
    assert_eq!(
        lookup(
            shadow,
            &[("pkg.a.mod_a", a), ("pkg.a.mod_c", b_other)],
            "L.forward"
        )
        .unwrap(),
        ["y"]
    );
}

#[test]
fn a_star_import_after_a_definition_may_rebind_it() {
    let star = "class L:\n    def forward(self, y): pass\n";
    let src = "class L:\n    def forward(self, x): pass\nfrom ..a.mod_a import *\n";
    assert_eq!(
        lookup(src, &[("pkg.a.mod_a", star)], "L.forward"),
        Err(LookupError::Ambiguous(2))
    );
    assert_eq!(
        lookup(src, &[("pkg.a.mod_a", "x = 1\n")], "L.forward").unwrap(),
        ["x"]
    );
    assert!(refusal(lookup(src, &[], "L.forward")).contains("may bind `L`"));
}

#[test]
fn a_function_is_a_module_level_function_not_a_method() {
    let src = "class Other:\n    def helper(self, a, b): pass\n";
    assert!(matches!(
        lookup(src, &[], "helper"),
        Err(LookupError::NotFound { .. })
    ));
    let src = "def helper(a, *, b=None): pass\n";
    assert_eq!(lookup(src, &[], "helper").unwrap(), ["a", "b"]);
}

#[test]
fn unknown_decorators_are_refused() {
    let src = "class L:\n    @my_cache\n    def forward(self, a): pass\n";
    assert!(
        refusal(lookup(src, &[], "L.forward"))
            .contains("`@my_cache`, which may change its signature")
    );
    let sm = "sm = staticmethod\nclass L:\n    @sm\n    def forward(a): pass\n";
    assert!(refusal(lookup(sm, &[], "L.forward")).contains("`@sm`"));
    let known = "class L:\n    @deprecate_kwarg(\"a\", new_name=\"b\")\n    @torch.no_grad()\n    def forward(self, b): pass\n";
    assert_eq!(lookup(known, &[], "L.forward").unwrap(), ["b"]);
}

#[test]
fn an_imported_module_is_parsed_once_while_its_text_is_the_same() {
    let module = |text: &str| crate::modules::Module {
        name: "tests/parsed-once/m.py".into(),
        text: Arc::from(text),
    };
    let first = parsed(module("x = 1\n"));
    assert!(Arc::ptr_eq(&first, &parsed(module("x = 1\n"))));
    assert!(!Arc::ptr_eq(&first, &parsed(module("x = 2\n"))));
}

#[test]
fn a_constructor_under_a_metaclass_is_refused() {
    let src = "class Meta(type):\n    def __call__(cls, *a): pass\nclass L(metaclass=Meta):\n    def __init__(self, a, b=None): pass\n";
    assert!(refusal(lookup(src, &[], "L.__init__")).contains("metaclass `Meta`"));
    assert_eq!(lookup(src, &[], "L.forward").ok(), None);
    let abc =
        "from abc import ABCMeta\nclass L(metaclass=ABCMeta):\n    def __init__(self, a): pass\n";
    assert_eq!(lookup(abc, &[], "L.__init__").unwrap(), ["a"]);
}

#[test]
fn a_method_under_a_metaclass_that_calls_is_refused() {
    // `Meta.__call__` may return an instance of another class: `L.forward` is not what
    // calling an instance made by `L(...)` runs.
    let calls = "class Meta(type):\n    def __call__(cls, *a):\n        return Other()\nclass Other:\n    def forward(self, y, x): pass\nclass L(metaclass=Meta):\n    def forward(self, x, y=None): pass\n";
    assert!(
        refusal(lookup(calls, &[], "L.forward")).contains("may make instances of another class")
    );
    // Inherited from a base, the same.
    let inherited = format!("{calls}class M(L):\n    pass\n");
    assert!(refusal(lookup(&inherited, &[], "M.forward")).contains("metaclass `Meta`"));
    // A metaclass without `__call__` (its own or its bases') leaves construction as `type`'s.
    let plain = "class Meta(type):\n    def __repr__(cls): return 'x'\nclass L(metaclass=Meta):\n    def forward(self, x, y=None): pass\n";
    assert_eq!(lookup(plain, &[], "L.forward").unwrap(), ["x", "y"]);
    // One that cannot be found may.
    let unknown =
        "from elsewhere import Meta\nclass L(metaclass=Meta):\n    def forward(self, x): pass\n";
    assert!(lookup(unknown, &[], "L.forward").is_err());
}
