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
        let keyword_only = args.field("keyword_only").is_some_and(Arg::flag);
        let section = if keyword_only {
            Section::KeywordOnly
        } else {
            Section::Either
        };
        one_parameter(&wanted, section)
            .map_err(|why| ActionFailure::at(site.node.byte_range(), "this function", why))?;
        if let Some(i) = list.position(name) {
            // Already there as written, among the same kind: applied. Otherwise another one.
            let existing = list.items[i];
            let same = normalized(&site.source[existing.byte_range()]) == normalized(&wanted)
                && list.section(i) == section;
            return if same {
                Ok(Vec::new())
            } else {
                Err(ActionFailure::at(
                    existing.byte_range(),
                    "this parameter",
                    format!(
                        "the function already has `{}` as a {} parameter; the rule adds `{wanted}` as a {} one",
                        &site.source[existing.byte_range()],
                        list.section(i).words(),
                        section.words()
                    ),
                ))
            };
        }
        if let Some((at, why)) = list.dynamic_scope() {
            return Err(ActionFailure::at(at, "here", why));
        }
        if let Some((at, binds)) = list.body_uses(name) {
            let why = if binds {
                format!(
                    "the body already assigns `{name}` (a local of that name): a parameter of that name would be that local, and what callers pass would be overwritten"
                )
            } else {
                format!(
                    "the body already reads `{name}`: with a parameter of that name it would read the parameter instead"
                )
            };
            let label = if binds { "assigned here" } else { "read here" };
            return Err(ActionFailure::at(at, label, why));
        }
        list.insertion(&wanted, keyword_only)
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
        args.identifier()
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
        let Some(at) = list.position(name) else {
            return Ok(Vec::new());
        };
        if let Some((at, why)) = list.dynamic_scope() {
            return Err(ActionFailure::at(at, "here", why));
        }
        if at == 0
            && let Some(call) = list.zero_argument_super()
        {
            return Err(ActionFailure::at(
                call,
                "here",
                format!(
                    "`super()` without arguments reads the first parameter, `{name}`: removing it breaks the call"
                ),
            ));
        }
        if let Some((read, _)) = list.body_uses(name) {
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

    fn position(&self, name: &str) -> Option<usize> {
        self.items
            .iter()
            .position(|p| param_name(*p, self.source) == Some(name))
    }

    /// A call in the body that reads its local variables by name (`locals()`, `vars()`,
    /// `eval`, `exec`, a frame's `f_locals`): adding or removing a parameter changes what it
    /// sees, which no edit here can check.
    fn dynamic_scope(&self) -> Option<(std::ops::Range<usize>, String)> {
        let body = self.function.child_by_field_name("body")?;
        ["locals", "vars", "eval", "exec", "_getframe", "currentframe"]
            .into_iter()
            .find_map(|name| {
                crate::python::names::identifiers_named(body, self.source, name)
                    .find(|n| n.parent().is_some_and(|p| p.kind() == "call" || p.kind() == "attribute"))
                    .map(|n| {
                        (
                            n.byte_range(),
                            format!("the body calls `{name}`, which sees the function's variables by name: a parameter added or removed changes what it returns"),
                        )
                    })
            })
    }

    /// A `super()` call without arguments in the body (it reads the first parameter).
    fn zero_argument_super(&self) -> Option<std::ops::Range<usize>> {
        let body = self.function.child_by_field_name("body")?;
        crate::python::names::identifiers_named(body, self.source, "super")
            .filter_map(|n| n.parent().filter(|p| p.kind() == "call"))
            .find(|call| {
                call.child_by_field_name("arguments")
                    .is_some_and(|a| a.named_child_count() == 0)
            })
            .map(|call| call.byte_range())
            .or_else(|| {
                crate::python::names::identifiers_named(body, self.source, "__class__")
                    .next()
                    .map(|n| n.byte_range())
            })
    }

    /// Where the body (decorators and defaults aside: they run outside) uses identifier
    /// `name`, an attribute or keyword of that spelling aside.
    /// The first use of `name` in the body, and whether it binds it (`x = …`, `for x in …`).
    fn body_uses(&self, name: &str) -> Option<(std::ops::Range<usize>, bool)> {
        let body = self.function.child_by_field_name("body")?;
        crate::python::names::identifiers_named(body, self.source, name)
            .find(|n| !crate::python::is_attribute_name(*n) && !is_keyword_name(*n))
            .map(|n| (n.byte_range(), crate::python::names::is_binding(n)))
    }

    /// What item `i` is.
    fn item(&self, i: usize) -> Item {
        item(self.items[i])
    }

    /// Which parameters item `i` is among.
    fn section(&self, i: usize) -> Section {
        if (i + 1..self.items.len()).any(|j| self.item(j) == Item::Slash) {
            Section::PositionalOnly
        } else if (0..i).any(|j| matches!(self.item(j), Item::Star | Item::VarArgs)) {
            Section::KeywordOnly
        } else {
            Section::Either
        }
    }

    /// The edits that add `declaration` where its kind goes.
    fn insertion(&self, declaration: &str, keyword_only: bool) -> Result<Vec<Edit>, ActionFailure> {
        let first = |f: &dyn Fn(Item) -> bool| (0..self.items.len()).find(|&i| f(self.item(i)));
        let star = first(&|k| matches!(k, Item::Star | Item::VarArgs));
        let double_star = first(&|k| k == Item::VarKeywords);
        if !keyword_only && let Some(s) = star.filter(|&s| self.item(s) == Item::VarArgs) {
            return Err(ActionFailure::at(
                self.items[s].byte_range(),
                "`*args`",
                "a positional parameter added before `*args` would take the first value it receives: add it `keyword_only: true`".into(),
            ));
        }
        // The parameter goes before this item (or at the end).
        Ok(match (keyword_only, star) {
            (false, Some(s)) => self.insert_at(Some(s), &[declaration]),
            (false, None) | (true, Some(_)) => self.insert_at(double_star, &[declaration]),
            (true, None) => self.insert_at(double_star, &["*", declaration]),
        })
    }

    /// Whether item `i` stands alone on its line (a list written one per line).
    fn own_line(&self, i: usize) -> bool {
        let start = self.items[i].start_byte();
        let line = self.source[..start].rfind('\n').map_or(0, |n| n + 1);
        self.source[line..start].trim().is_empty()
    }

    /// Inserts `texts` as new items before item `before` (`None`: after the last), in the
    /// list's layout.
    fn insert_at(&self, before: Option<usize>, texts: &[&str]) -> Vec<Edit> {
        let at = |offset: usize, text: String| Edit {
            range: offset..offset,
            text,
        };
        let indented = |i: usize| line_indent(self.source, self.items[i].start_byte());
        match (before, self.items.len().checked_sub(1)) {
            // Before an item: written where it starts, in its layout.
            (Some(i), _) => {
                let separator = if self.own_line(i) {
                    format!(",\n{}", indented(i))
                } else {
                    ", ".into()
                };
                let mut text = texts.join(&separator);
                text.push_str(&separator);
                vec![at(self.items[i].start_byte(), text)]
            }
            // After the last item: on lines of their own after its line (its comment staying
            // with it) where the list is one per line, else right after it.
            (None, Some(last)) => {
                let end = self.items[last].end_byte();
                if !self.own_line(last) {
                    return vec![at(end, format!(", {}", texts.join(", ")))];
                }
                let separator = format!(",\n{}", indented(last));
                let rest = &self.source[end..];
                let comma = rest.trim_start_matches([' ', '\t']).starts_with(',');
                let mut line_end = end + rest.find('\n').unwrap_or(rest.len());
                if self.source[..line_end].ends_with('\r') {
                    line_end -= 1;
                }
                let added = texts.join(&separator);
                if comma {
                    vec![at(line_end, format!("\n{}{added},", indented(last)))]
                } else {
                    vec![
                        at(end, ",".into()),
                        at(line_end, format!("\n{}{added}", indented(last))),
                    ]
                }
            }
            // An empty list: between its brackets.
            (None, None) => vec![Edit {
                range: self.node.start_byte() + 1..self.node.end_byte() - 1,
                text: texts.join(", "),
            }],
        }
    }

    /// The edit that removes item `at` with one of the commas around it; a bare `*` or `/`
    /// left with nothing to mark goes too. An item on a line of its own goes with its line
    /// (and its comment).
    fn removal(&self, at: usize) -> Edit {
        let (mut first, mut last) = (at, at);
        // `*, x` with x the only keyword-only parameter: the `*` would mark nothing.
        if at > 0 && self.item(at - 1) == Item::Star {
            let keyword_only_left = (at + 1..self.items.len()).any(|i| self.item(i) == Item::Param);
            if !keyword_only_left {
                first = at - 1;
            }
        }
        // `x, /` with x the only positional-only parameter: `/` alone is no list.
        if at == 0 && at + 1 < self.items.len() && self.item(at + 1) == Item::Slash {
            last = at + 1;
        }
        if first == 0 && last + 1 == self.items.len() {
            // Nothing left: the brackets close on nothing (a trailing comma goes too).
            return Edit {
                range: self.node.start_byte() + 1..self.node.end_byte() - 1,
                text: String::new(),
            };
        }
        if first == last && self.own_line(at) && last + 1 < self.items.len()
            || self.whole_lines(first, last)
        {
            let start = self.items[first].start_byte();
            let line_start = self.source[..start].rfind('\n').map_or(0, |n| n + 1);
            let end = self.items[last].end_byte();
            let line_end = self.source[end..]
                .find('\n')
                .map_or(self.source.len(), |n| end + n + 1);
            return Edit {
                range: line_start..line_end,
                text: String::new(),
            };
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

    /// Whether items `first..=last` fill their lines alone, each line ending in a comma (a
    /// one-per-line list with a trailing comma): then their lines go whole.
    fn whole_lines(&self, first: usize, last: usize) -> bool {
        (first..=last).all(|i| self.own_line(i)) && {
            let end = self.items[last].end_byte();
            let rest = self.source[end..].trim_start_matches([' ', '\t']);
            rest.starts_with(',')
                && rest[1..]
                    .trim_start_matches([' ', '\t'])
                    .starts_with(['\n', '\r', '#'])
        }
    }
}

/// What a parameter-list item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// A named parameter (with or without default and annotation).
    Param,
    /// `/`.
    Slash,
    /// A bare `*`.
    Star,
    /// `*args` (annotated or not).
    VarArgs,
    /// `**kwargs` (annotated or not).
    VarKeywords,
}

fn item(p: Node<'_>) -> Item {
    let splat = |n: Node<'_>| match n.kind() {
        "list_splat_pattern" => Some(Item::VarArgs),
        "dictionary_splat_pattern" => Some(Item::VarKeywords),
        _ => None,
    };
    match p.kind() {
        "positional_separator" => Item::Slash,
        "keyword_separator" => Item::Star,
        // `*args: T` is a typed parameter around the splat.
        "typed_parameter" => p.named_child(0).and_then(splat).unwrap_or(Item::Param),
        _ => splat(p).unwrap_or(Item::Param),
    }
}

/// Which parameters an item is among.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    PositionalOnly,
    Either,
    KeywordOnly,
}

impl Section {
    fn words(self) -> &'static str {
        match self {
            Section::PositionalOnly => "positional-only",
            Section::Either => "positional-or-keyword",
            Section::KeywordOnly => "keyword-only",
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
    let name = value.identifier()?;
    if one_parameter(name.text(), Section::KeywordOnly).is_err() {
        return Err(value.invalid(format!(
            "`{}` is not a name a parameter can have",
            name.text()
        )));
    }
    Ok(name)
}

/// Whether identifier `n` names a call's keyword (`f(x=1)`): the callee's parameter, not a
/// variable here.
fn is_keyword_name(n: Node<'_>) -> bool {
    n.parent()
        .filter(|p| p.kind() == "keyword_argument")
        .is_some_and(|p| p.child_by_field_name("name") == Some(n))
}

/// `Err` unless `declaration` is one parameter of that kind: a default or annotation could
/// otherwise bring more (`default: "1, c=2"`) or not be Python.
fn one_parameter(declaration: &str, section: Section) -> Result<(), String> {
    let star = if section == Section::KeywordOnly {
        "*, "
    } else {
        ""
    };
    let code = format!("def _rg({star}{declaration}):\n    pass\n");
    let tree = crate::python::parse(&code);
    let count = tree
        .root_node()
        .named_child(0)
        .and_then(|f| f.child_by_field_name("parameters"))
        .map(|p| {
            let mut cursor = p.walk();
            p.named_children(&mut cursor)
                .filter(|c| item(*c) == Item::Param && c.kind() != "comment")
                .count()
        });
    let valid = !tree.root_node().has_error()
        && count == Some(1)
        && crate::python::cpython::errors(&code).is_empty();
    if valid {
        Ok(())
    } else {
        Err(format!("`{declaration}` is not one parameter"))
    }
}
