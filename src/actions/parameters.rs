//! Actions on the matched function's parameters: `add_parameter` and `remove_parameter`.
//!
//! A parameter is added where its kind goes — a positional-or-keyword one after the last of
//! those (before `*args`, `*` and `**kwargs`), a keyword-only one after `*` or `*args` (adding
//! the bare `*` where there is none) — written in the layout of the list (one per line, or all
//! on one). Each refuses what would change the meaning of code it does not see written: a new
//! positional where `*args` would no longer receive the same values, a name the body already
//! reads (it would read the parameter instead), a removed parameter the body still uses.

use tree_sitter::Node;

use super::{ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, register_action};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::python::line_indent;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::convert::is_identifier;
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

/// Parameter actions edit the `def` line of the function they match, and read its body.
const ON_FUNCTION: Facts = Facts {
    needs: Needs::Function,
    edits_within_match: false,
};

/// `add_parameter: {name, default, annotation, keyword_only}`: adds a parameter.
#[derive(Debug)]
pub struct AddParameter;
register_action!(AddParameter);

impl ActionSpec for AddParameter {
    fn name(&self) -> &'static str {
        "add_parameter"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let within = "`add_parameter`";
        let expected = "a mapping {name, default, annotation, keyword_only}";
        args.fields(
            &["name", "default", "annotation", "keyword_only"],
            within,
            expected,
        )?;
        let mut fields = vec![(Spanned::new("name".into(), 0..0), identifier(args, within)?)];
        for key in ["default", "annotation"] {
            if let Some(value) = args.field(key) {
                fields.push((Spanned::new(key.into(), 0..0), value.text()?));
            }
        }
        let keyword_only = match args.field("keyword_only") {
            Some(flag) => flag.flag("true or false")?,
            None => false,
        };
        if keyword_only {
            fields.push((Spanned::new("keyword_only".into(), 0..0), Arg::Flag(true)));
        } else if args.field("default").is_none() {
            return Err(args.invalid(
                "a positional parameter is added with a `default` (callers do not pass it yet); a required one must be `keyword_only: true`",
            ));
        }
        Ok(Arg::Fields(fields))
    }
}

impl ActionUnit for AddParameter {
    fn facts(&self) -> Facts {
        ON_FUNCTION
    }

    fn templates<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        ["default", "annotation"]
            .into_iter()
            .filter_map(|k| args.field(k).and_then(Arg::snippet))
            .collect()
    }

    fn explain(&self, args: &Arg) -> String {
        let kind = if args.field("keyword_only").is_some_and(Arg::flag) {
            "keyword-only parameter"
        } else {
            "parameter"
        };
        format!(
            "add the {kind} `{}`",
            declaration(args, |t| t.to_string()).trim()
        )
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let list = Parameters::of(site)?;
        let name = args.field("name").map_or("", Arg::text);
        let indent = crate::python::node_indent(site.source, site.node);
        let wanted = declaration(args, |t| substitute(t, site.bindings, site.source, indent));
        if let Some(existing) = list.named(name) {
            // Already there as written: applied. Otherwise it is another parameter.
            let same = normalized(&site.source[existing.byte_range()]) == normalized(&wanted);
            return if same {
                Ok(Vec::new())
            } else {
                Err(ActionFailure::at(
                    existing.byte_range(),
                    "this parameter",
                    format!("the function already has a parameter `{name}`, not `{wanted}`"),
                ))
            };
        }
        if let Some(read) = list.body_uses(name) {
            return Err(ActionFailure::at(
                read,
                "read here",
                format!(
                    "the body already uses `{name}`: with a parameter of that name it would read the parameter instead"
                ),
            ));
        }
        let keyword_only = args.field("keyword_only").is_some_and(Arg::flag);
        Ok(vec![list.insertion(&wanted, keyword_only)?])
    }
}

/// `remove_parameter: NAME`: removes a parameter the body does not use.
#[derive(Debug)]
pub struct RemoveParameter;
register_action!(RemoveParameter);

impl ActionSpec for RemoveParameter {
    fn name(&self) -> &'static str {
        "remove_parameter"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let name = args.string()?;
        if !is_identifier(&name.value) {
            return Err(args.invalid(format!("`{}` is not an identifier", name.value)));
        }
        args.text()
    }
}

impl ActionUnit for RemoveParameter {
    fn facts(&self) -> Facts {
        ON_FUNCTION
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn explain(&self, args: &Arg) -> String {
        format!("remove the parameter `{}`", args.text())
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let list = Parameters::of(site)?;
        let name = args.text();
        let Some(at) = list
            .items
            .iter()
            .position(|p| param_name(*p, site.source) == Some(name))
        else {
            return Ok(Vec::new());
        };
        if let Some(read) = list.body_uses(name) {
            return Err(ActionFailure::at(
                read,
                "used here",
                format!("the body uses `{name}`: removing the parameter would leave a NameError or read another binding"),
            )
            .help("remove or rewrite that use first (another rule, `after:` this one's prerequisite)"));
        }
        Ok(vec![list.removal(at)])
    }
}

/// The matched function's parameter list.
struct Parameters<'s, 't> {
    source: &'s str,
    function: Node<'t>,
    /// The `parameters` node, brackets included.
    node: Node<'t>,
    /// Its parameters and separators (`*`, `/`), in order.
    items: Vec<Node<'t>>,
}

impl<'s, 't> Parameters<'s, 't> {
    fn of(site: &Site<'s, 't>) -> Result<Self, ActionFailure> {
        let function = site.node;
        let node = (function.kind() == "function_definition")
            .then(|| function.child_by_field_name("parameters"))
            .flatten()
            .ok_or_else(|| {
                ActionFailure::at(
                    function.byte_range(),
                    "not a function",
                    "this action needs a function pattern such as `def forward($$$P): $$$B`".into(),
                )
            })?;
        let mut cursor = node.walk();
        let items = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        Ok(Parameters {
            source: site.source,
            function,
            node,
            items,
        })
    }

    fn named(&self, name: &str) -> Option<Node<'t>> {
        self.items
            .iter()
            .copied()
            .find(|p| param_name(*p, self.source) == Some(name))
    }

    /// Where the body (decorators and defaults aside: they run outside) uses identifier
    /// `name`, an attribute or keyword of that spelling aside.
    fn body_uses(&self, name: &str) -> Option<std::ops::Range<usize>> {
        let body = self.function.child_by_field_name("body")?;
        crate::python::names::identifiers_named(body, self.source, name)
            .find(|n| !crate::python::is_attribute_name(*n) && !is_keyword_name(*n))
            .map(|n| n.byte_range())
    }

    /// The edit that adds `declaration` where its kind goes.
    fn insertion(&self, declaration: &str, keyword_only: bool) -> Result<Edit, ActionFailure> {
        let first_of = |kinds: &[&str]| self.items.iter().position(|p| kinds.contains(&p.kind()));
        let star = first_of(&["list_splat_pattern", "keyword_separator"]);
        let double_star = first_of(&["dictionary_splat_pattern"]);
        if !keyword_only
            && let Some(s) = star.filter(|s| self.items[*s].kind() == "list_splat_pattern")
        {
            return Err(ActionFailure::at(
                self.items[s].byte_range(),
                "`*args`",
                "a positional parameter added before `*args` would take the first value it receives: add it `keyword_only: true`".into(),
            ));
        }
        // The parameter goes before this item (or at the end).
        let (before, text) = match (keyword_only, star) {
            (false, Some(s)) => (Some(s), declaration.to_string()),
            (false, None) => (double_star, declaration.to_string()),
            (true, Some(_)) => (double_star, declaration.to_string()),
            (true, None) => (double_star, format!("*, {declaration}")),
        };
        Ok(self.insert_at(before, &text))
    }

    /// Inserts `text` as a new item before item `before` (`None`: after the last), in the
    /// list's layout.
    fn insert_at(&self, before: Option<usize>, text: &str) -> Edit {
        let multiline = self.source[self.node.byte_range()].contains('\n');
        let anchor = match before {
            Some(i) => self.items.get(i).copied(),
            None => None,
        };
        match (anchor, self.items.last()) {
            // Before an item: written where it starts, in its layout.
            (Some(item), _) => {
                let separator = if multiline {
                    format!(",\n{}", line_indent(self.source, item.start_byte()))
                } else {
                    ", ".into()
                };
                let at = item.start_byte();
                Edit {
                    range: at..at,
                    text: format!("{text}{separator}"),
                }
            }
            // After the last item's line where the list ends in a comma (its comment stays
            // with it), else right after it.
            (None, Some(last)) => {
                let rest = &self.source[last.end_byte()..];
                let trailing_comma = rest.trim_start_matches([' ', '\t']).starts_with(',');
                if multiline && trailing_comma {
                    let at = last.end_byte() + rest.find('\n').unwrap_or(rest.len());
                    let indent = line_indent(self.source, last.start_byte());
                    return Edit {
                        range: at..at,
                        text: format!("\n{indent}{text},"),
                    };
                }
                let at = last.end_byte();
                let separator = if multiline {
                    format!(",\n{}", line_indent(self.source, last.start_byte()))
                } else {
                    ", ".into()
                };
                Edit {
                    range: at..at,
                    text: format!("{separator}{text}"),
                }
            }
            // An empty list: between its brackets.
            (None, None) => {
                let at = self.node.start_byte() + 1;
                Edit {
                    range: at..self.node.end_byte() - 1,
                    text: text.into(),
                }
            }
        }
    }

    /// The edit that removes item `at` with one of the commas around it; a bare `*` or `/`
    /// left with nothing to mark goes too.
    fn removal(&self, at: usize) -> Edit {
        let mut first = at;
        let mut last = at;
        let lone = |i: usize, kind: &str| self.items.get(i).is_some_and(|p| p.kind() == kind);
        // `*, x` with x the only keyword-only parameter: the `*` would mark nothing.
        if at > 0 && lone(at - 1, "keyword_separator") {
            let keyword_only_left = self.items[at + 1..]
                .iter()
                .any(|p| p.kind() != "dictionary_splat_pattern");
            if !keyword_only_left {
                first = at - 1;
            }
        }
        // `x, /` with x the only positional-only parameter: `/` alone is no list.
        if lone(at + 1, "positional_separator") && at == 0 {
            last = at + 1;
        }
        let start = self.items[first].start_byte();
        let end = self.items[last].end_byte();
        let range = match (first.checked_sub(1), self.items.get(last + 1)) {
            // Up to the next item: the comma after, and the layout before it.
            (_, Some(next)) => start..next.start_byte(),
            // The last: from the end of the one before, its comma with it.
            (Some(prev), None) => self.items[prev].end_byte()..end,
            (None, None) => start..end,
        };
        Edit {
            range,
            text: String::new(),
        }
    }
}

/// The parameter's name (`x` of `x`, `x=1`, `x: int`, `*x`, `**x`), or `None` for `*` and `/`.
fn param_name<'s>(param: Node<'_>, source: &'s str) -> Option<&'s str> {
    let name = match param.kind() {
        "identifier" => Some(param),
        "default_parameter" | "typed_default_parameter" => param.child_by_field_name("name"),
        "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
            let mut cursor = param.walk();
            let first = param.named_children(&mut cursor).next();
            first.and_then(|c| {
                if c.kind() == "identifier" {
                    Some(c)
                } else {
                    c.named_child(0).filter(|n| n.kind() == "identifier")
                }
            })
        }
        _ => None,
    }?;
    Some(&source[name.byte_range()])
}

/// `name: annotation = default` as written from `args`, each template filled by `fill`.
fn declaration(args: &Arg, fill: impl Fn(&str) -> String) -> String {
    let name = args.field("name").map_or("", Arg::text);
    let annotation = args.field("annotation").map(|a| fill(a.text()));
    let default = args.field("default").map(|d| fill(d.text()));
    match (annotation, default) {
        (Some(a), Some(d)) => format!("{name}: {a} = {d}"),
        (Some(a), None) => format!("{name}: {a}"),
        (None, Some(d)) => format!("{name}={d}"),
        (None, None) => name.to_string(),
    }
}

/// Code without its spaces, for comparing a declaration with one written differently.
fn normalized(code: &str) -> String {
    code.chars().filter(|c| !c.is_whitespace()).collect()
}

fn identifier(args: &ArgReader<'_>, within: &str) -> Result<Arg, RuleError> {
    let value = args.require("name", within)?;
    let name = value.string()?;
    if !is_identifier(&name.value) {
        return Err(value.invalid(format!("`{}` is not an identifier", name.value)));
    }
    value.text()
}

/// Whether identifier `n` names a call's keyword (`f(x=1)`): the callee's parameter, not a
/// variable here.
fn is_keyword_name(n: Node<'_>) -> bool {
    n.parent()
        .filter(|p| p.kind() == "keyword_argument")
        .is_some_and(|p| p.child_by_field_name("name") == Some(n))
}
