//! `derive_class`: a new subclass generated from a method's signature and its class's
//! docstring — what a patcher builds with `inspect.signature` and string templates for each
//! trainer (`class UnslothDPOTrainer(DPOTrainer)` whose `__init__` takes what `DPOTrainer`'s
//! takes, plus its own parameters, and forwards every one to `super().__init__`).
//!
//! ```yaml
//! inside: {class: DPOTrainer}
//! match: "def __init__($$$P): $$$B"
//! action:
//!   derive_class:
//!     name: "Unsloth${class}"
//!     parameters: "unsloth_num_chunks=-1"
//!     before_super: "if args is None: args = UnslothDPOConfig()"
//!     after_super: "self.unsloth_num_chunks = unsloth_num_chunks"
//! ```
//!
//! The parameters are copied as written (annotations and defaults: the subclass's signature is
//! the original's), the forwarding call is built from the signature and checked to bind each
//! parameter to its own name (as `outline`'s is), and the class stands after the original.

use tree_sitter::Node;

use super::outline::checks::{Place, top_level_binding};
use super::outline::forwarding_call;
use super::outline::text::{check_name_template, expand_name};
use super::signature::read_params;
use super::{ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, register_action};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::python::significant_children;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

mod checks;

/// `derive_class: {name, parameters, before_super, after_super}` on a method match.
#[derive(Debug)]
pub struct DeriveClass;
register_action!(DeriveClass);

const FIELDS: [&str; 4] = ["name", "parameters", "before_super", "after_super"];

impl ActionSpec for DeriveClass {
    fn name(&self) -> &'static str {
        "derive_class"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let within = "`derive_class`";
        args.fields(
            &FIELDS,
            within,
            "a mapping {name, parameters, before_super, after_super}",
        )?;
        let name = args.require("name", within)?;
        let text = name.text()?;
        check_name_template(text.text()).map_err(|e| name.invalid(e))?;
        let mut fields = vec![(Spanned::new("name".into(), 0..0), text)];
        for key in &FIELDS[1..] {
            if let Some(value) = args.field(key) {
                let text = value.text()?;
                if *key == "parameters" {
                    extra_parameters(text.text()).map_err(|e| value.invalid(e))?;
                }
                fields.push((Spanned::new((*key).into(), 0..0), text));
            }
        }
        Ok(Arg::Fields(fields))
    }
}

/// The names of `extra` (`"a=1, b: int = 2"`), each a parameter with a default (callers of the
/// original pass none of them); `Err` says what is not.
fn extra_parameters(extra: &str) -> Result<Vec<String>, String> {
    if extra.contains(['$', '\n']) {
        return Err("write the added parameters as plain Python on one line".into());
    }
    let tree = crate::python::parse(&format!("def f({extra}): pass\n"));
    let root = tree.root_node();
    let list = root
        .named_child(0)
        .and_then(|d| d.child_by_field_name("parameters"))
        .filter(|_| !root.has_error());
    let Some(list) = list else {
        return Err("not a Python parameter list".into());
    };
    if checks::suspends_in(list) {
        return Err(
            "a default that yields or awaits runs where the class is defined, outside any function"
                .into(),
        );
    }
    let mut names = Vec::new();
    for p in significant_children(list)
        .into_iter()
        .filter(|p| p.is_named())
    {
        if !matches!(p.kind(), "default_parameter" | "typed_default_parameter") {
            return Err(format!(
                "`{}` is not a parameter with a default",
                &format!("def f({extra}): pass\n")[p.byte_range()]
            ));
        }
        let name = p.child_by_field_name("name").map(|n| n.byte_range());
        names.extend(name.map(|r| format!("def f({extra}): pass\n")[r].to_string()));
    }
    Ok(names)
}

impl ActionUnit for DeriveClass {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Function,
            edits_within_match: false,
        }
    }

    /// The statements around the `super()` call are code; the name and the parameters are
    /// checked when read.
    fn templates<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        ["before_super", "after_super"]
            .iter()
            .filter_map(|k| args.field(k).and_then(Arg::snippet))
            .collect()
    }

    fn explain(&self, args: &Arg) -> String {
        let name = args.field("name").map_or("", Arg::text);
        format!(
            "define `class {name}(...)` after the class: its `__init__` takes the method's parameters{} and forwards them to `super().__init__`",
            args.field("parameters")
                .map_or(String::new(), |p| format!(" and `{}`", p.text()))
        )
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        signatures: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let def = site.node;
        let outer = def
            .parent()
            .filter(|p| p.kind() == "decorated_definition")
            .unwrap_or(def);
        let class = (outer.parent())
            .filter(|b| b.kind() == "block")
            .and_then(|b| b.parent())
            .filter(|c| c.kind() == "class_definition");
        let Some(class) = class else {
            return Err(ActionFailure::at(
                def.byte_range(),
                "no method",
                "`derive_class` derives from the class of a method; this function stands in none"
                    .into(),
            ));
        };
        checks::class_is_what_runs(def, class, site.root, site.source)?;
        let place = Place::of(def, site.source)?;
        let method = def
            .child_by_field_name("name")
            .map(|n| &site.source[n.byte_range()]);
        if method != Some("__init__") {
            return Err(ActionFailure::at(
                def.byte_range(),
                "not `__init__`",
                "`derive_class` derives a class from its `__init__`: its parameters are the new class's".into(),
            )
            .help("match `def __init__($$$P): $$$B` inside the class"));
        }
        // A decorator decides how `__init__` is called (`staticmethod`, a keyword it renames):
        // the derived method, plain, would bind calls otherwise.
        if let Some(outer) = def.parent().filter(|p| p.kind() == "decorated_definition") {
            return Err(ActionFailure::at(
                outer.byte_range(),
                "decorated",
                "this `__init__` is decorated: calls go through the decorator, which the derived class's `__init__` would not have".into(),
            ));
        }
        let name = expand_name(args.field("name").map_or("", Arg::text), &place, site)?;
        let generated = derived_class(args, site, def, class, &name)?;
        if name_is_taken(&name, &generated, class, site, signatures)? {
            return Ok(Vec::new());
        }
        signatures.introduced.insert(name, def.byte_range());
        let end = super::after_trailing_comment(site.source, place.top.end_byte());
        Ok(vec![Edit {
            range: end..end,
            text: format!("\n\n\n{}", generated.trim_end()),
        }])
    }
}

/// Whether the class `name` already stands in the module as generated (applied); refused
/// where the name would shadow a builtin, is bound to something else (at module level or by
/// a function's `global`), or is derived twice in this file.
fn name_is_taken(
    name: &str,
    generated: &str,
    class: Node<'_>,
    site: &Site<'_, '_>,
    signatures: &Signatures,
) -> Result<bool, ActionFailure> {
    let shadowed = || {
        Err(ActionFailure::at(
            class.byte_range(),
            "this class",
            format!("`{name}` names a builtin or a global the module binds elsewhere (a function's `global`, a loop, a `with`): a class of that name would change what other code reads"),
        )
        .help("give `derive_class` another `name`"))
    };
    if crate::python::names::is_builtin(name) {
        return shadowed();
    }
    if let Some(existing) = top_level_binding(site.root, name, site.source) {
        if super::same_code(&[existing], site.source, generated) {
            return Ok(true);
        }
        return Err(ActionFailure::at(
            existing.byte_range(),
            "already bound here",
            format!("the module already binds `{name}`, to something else than the class this rule derives"),
        )
        .help("give `derive_class` another `name`"));
    }
    if !crate::python::names::module_binding_sites(site.root, site.source, name).is_empty() {
        return shadowed();
    }
    if let Some(other) = signatures.introduced.get(name) {
        return Err(ActionFailure::at(
            other.clone(),
            "derived here too",
            format!("`{name}` is derived twice in this file"),
        ));
    }
    Ok(false)
}

/// The text of the derived class (at module level, four-space indents).
fn derived_class(
    args: &Arg,
    site: &Site<'_, '_>,
    def: Node<'_>,
    class: Node<'_>,
    name: &str,
) -> Result<String, ActionFailure> {
    let source = site.source;
    let text = |n: Node<'_>| &source[n.byte_range()];
    let base = class.child_by_field_name("name").map_or("", text);
    let list = def.child_by_field_name("parameters").ok_or_else(|| {
        ActionFailure::at(
            def.byte_range(),
            "here",
            "the method has no parameters".into(),
        )
    })?;
    let params = read_params(list, source);
    let extra = args.field("parameters").map_or("", Arg::text);
    let added = copied_signature(list, &params, extra)?;
    checks::signature_moves(def, class, &params, &added, source)?;
    let call = forwarding_call("super().__init__", &params[1..], def)?;
    let doc = docstring(class, source);
    let mut out = format!("class {name}({base}):\n");
    if let Some(doc) = doc {
        out.push_str(&format!("    {doc}\n\n"));
    }
    let returns = def
        .child_by_field_name("return_type")
        .map_or(String::new(), |r| format!(" -> {}", text(r)));
    out.push_str(&format!(
        "    def __init__({}){returns}:\n",
        parameter_list(list, source, extra)
    ));
    // One argument per line where the call would not fit one (the arguments are names).
    let call = match call.strip_prefix("super().__init__(") {
        Some(args) if call.len() > 80 => {
            let args = args.trim_end_matches(')').split(", ");
            let lines: String = args.map(|a| format!("            {a},\n")).collect();
            format!("super().__init__(\n{lines}        )")
        }
        _ => call,
    };
    for key in ["before_super", "after_super"] {
        if key == "after_super" {
            out.push_str(&format!("        {call}\n"));
        }
        if let Some(code) = args.field(key).filter(|c| !c.text().trim().is_empty()) {
            let written = substitute(code.text(), site.bindings, source, "        ");
            if checks::suspends(&written) {
                return Err(ActionFailure::at(
                    def.byte_range(),
                    "this `__init__`",
                    format!(
                        "`{key}` yields or awaits: the derived `__init__` would be a generator or a coroutine"
                    ),
                ));
            }
            out.push_str(&format!("        {}\n", written.trim_end()));
        }
    }
    Ok(out)
}

/// The names `extra` adds to the method's parameters, once the signature can be copied: a
/// first parameter for the instance, constant defaults only, no name taken twice.
fn copied_signature(
    list: Node<'_>,
    params: &[super::signature::Param],
    extra: &str,
) -> Result<Vec<String>, ActionFailure> {
    if params.is_empty() {
        return Err(ActionFailure::at(
            list.byte_range(),
            "no `self`",
            "a method without parameters cannot be forwarded to".into(),
        ));
    }
    // A default is evaluated where the `def` stands: in the class body (which may bind the
    // names it reads), once. Written again at module level it could read another binding, run
    // its side effects a second time, or make a second mutable object: only constants move.
    if let Some(p) = params
        .iter()
        .find(|p| p.default.is_some() && !p.constant_default)
    {
        return Err(ActionFailure::at(
            list.byte_range(),
            "these parameters",
            format!(
                "the default of `{}` (`{}`) is not a constant: evaluated again for the derived class, at module level, it could read another binding, run again or make another object",
                p.name,
                p.default.as_deref().unwrap_or("")
            ),
        ));
    }
    let added = extra_parameters(extra).unwrap_or_default();
    if let Some(clash) = added.iter().find(|a| params.iter().any(|p| &p.name == *a)) {
        return Err(ActionFailure::at(
            list.byte_range(),
            "these parameters",
            format!("the method already takes `{clash}`: the derived class cannot add it"),
        ));
    }
    Ok(added)
}

/// The class's docstring as written: a string first in its body (`("a " "b")` too; an f-string
/// is none: Python runs it and sets no `__doc__`).
fn docstring<'s>(class: Node<'_>, source: &'s str) -> Option<&'s str> {
    let first = *significant_children(class.child_by_field_name("body")?).first()?;
    let doc = first.named_child(0)?;
    let is_doc = first.kind() == "expression_statement"
        && first.named_child_count() == 1
        && crate::python::imports::is_docstring(first)
        && !checks::is_fstring(doc, source);
    is_doc.then(|| &source[doc.byte_range()])
}

/// The method's parameters as written (comments left out), one line each when they do not fit one, with
/// `extra` before a `**kwargs` (or last).
fn parameter_list(list: Node<'_>, source: &str, extra: &str) -> String {
    let mut items: Vec<String> = significant_children(list)
        .into_iter()
        .filter(|p| p.is_named() && p.kind() != "comment")
        .map(|p| source[p.byte_range()].to_string())
        .collect();
    if !extra.trim().is_empty() {
        let at = items
            .iter()
            .position(|p| p.starts_with("**"))
            .unwrap_or(items.len());
        items.insert(at, extra.trim().trim_end_matches(',').to_string());
    }
    let one_line = items.join(", ");
    if one_line.len() <= 72 && !one_line.contains('\n') {
        return one_line;
    }
    format!("\n        {},\n    ", items.join(",\n        "))
}
