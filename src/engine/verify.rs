//! Checks of a step's result before anything is kept: the patched text parses, and running the
//! rules on their own output changes nothing.

use std::ops::Range;

use super::PatchError;
use super::outcome::{RuleStatus, Survey};
use super::parsed::{Parsed, error_span};
use crate::edit::{self, PlannedEdit};
use crate::python::{compile_check, cpython, describe_syntax_error, first_syntax_error, names};
use crate::source::{SourceFile, span};

/// A result that does not parse: why, where, and the text.
pub(crate) struct Rejected {
    /// What tree-sitter or CPython says is wrong.
    pub reason: String,
    /// Where, in `output`.
    pub at: Range<usize>,
    /// Other places the same refusal covers (every unbound name of an edit, not the first).
    pub also: Vec<Range<usize>>,
    /// The result.
    pub output: String,
    /// What is wrong with it.
    pub kind: Rejection,
}

/// Why a result is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// It does not parse, or CPython rejects it.
    Syntax,
    /// It reads a name nothing provides.
    Name,
    /// It reads an attribute of `self` the class does not have in this release.
    Attribute,
}

/// The names a step's rules declare: provided by the runtime, or brought in by `imports`.
pub(crate) struct Names<'r> {
    /// `provides`: bound in the module by whoever runs it.
    pub provided: Vec<&'r str>,
    /// Bound by the `imports` the step adds: a read of one the edits wrote must find the
    /// module's binding, not a nearer one.
    pub imported: Vec<&'r str>,
    /// The file, as given: the release it belongs to is found above it, for the attributes
    /// the edits read of `self`.
    pub path: &'r str,
}

/// Applies ordered `planned` edits to `text` (parsed as `parsed`) and parses the result: only
/// the edited regions where `regions_only` (nothing plans on it again), else the whole tree,
/// incrementally. A result that tree-sitter or CPython's grammar rejects is refused.
pub(crate) fn apply_and_reparse(
    text: &str,
    parsed: &Parsed,
    regions_only: bool,
    planned: &[PlannedEdit],
    names: &Names<'_>,
) -> Result<(String, Parsed), Rejected> {
    let output = edit::apply(text, planned);
    let reparsed = if regions_only {
        parsed.edited_regions(&output, planned)
    } else {
        parsed.reparse(text, planned, &output)
    };
    // tree-sitter first (it pins down what it cannot read), then CPython's own grammar, which
    // rejects some code tree-sitter accepts.
    let (reason, at) = match first_syntax_error(reparsed.tree.root_node()) {
        Some(error) => (
            describe_syntax_error(error, &output),
            error_span(error, &output),
        ),
        None => match cpython_error(text, planned, &output, &reparsed) {
            Some(e) => (format!("CPython rejects it: {}", e.message), e.range),
            None => {
                let refused = unresolved_name((text, parsed), planned, &output, &reparsed, names)
                    .map(|(reason, mut at)| {
                        let first = at.remove(0);
                        (reason, first, at, Rejection::Name)
                    })
                    .or_else(|| {
                        let tree = crate::python::Held::or_parse(
                            reparsed
                                .regions
                                .is_none()
                                .then(|| reparsed.tree.root_node()),
                            &output,
                        );
                        super::attributes::unknown_attribute(
                            names.path,
                            &output,
                            tree.root(),
                            &edit_spans(text, planned),
                            &names.provided,
                        )
                        .map(|(reason, at)| (reason, at, Vec::new(), Rejection::Attribute))
                    });
                match refused {
                    None => return Ok((output, reparsed)),
                    Some((reason, at, also, kind)) => {
                        return Err(Rejected {
                            reason,
                            at,
                            also,
                            output,
                            kind,
                        });
                    }
                }
            }
        },
    };
    Err(Rejected {
        reason,
        at,
        also: Vec::new(),
        output,
        kind: Rejection::Syntax,
    })
}

/// Every name the edits read that nothing else in `output` provides (see
/// `python::names`), as a refusal's reason and place.
fn unresolved_name(
    (text, parsed): (&str, &Parsed),
    planned: &[PlannedEdit],
    output: &str,
    reparsed: &Parsed,
    declared: &Names<'_>,
) -> Option<(String, Vec<Range<usize>>)> {
    let edits = edit_spans(text, planned);
    // Whole trees the step already holds save the name check a parse each.
    let output_whole = reparsed
        .regions
        .is_none()
        .then(|| reparsed.tree.root_node());
    let whole = names::Whole {
        input: parsed.regions.is_none().then(|| parsed.tree.root_node()),
        output: output_whole,
    };
    if !declared.imported.is_empty() {
        let ranges: Vec<Range<usize>> = edits.iter().map(|(r, _)| r.clone()).collect();
        let tree = crate::python::Held::or_parse(output_whole, output);
        if let Some((name, at, scope)) =
            names::first_shadowed(output, tree.root(), &ranges, &declared.imported)
        {
            return Some((
                format!(
                    "the edit reads `{name}`, which the rule imports, but {scope} binds `{name}` nearer: the read would not find the import"
                ),
                vec![at],
            ));
        }
    }
    let found = names::unresolved(
        (text, output),
        reparsed.tree.root_node(),
        &edits,
        &declared.provided,
        whole,
    );
    if found.is_empty() {
        return None;
    }
    if let [one] = found.as_slice() {
        return Some((
            format!(
                "the edit reads `{}`, which no scope it can see binds (searched {}){}: a NameError when it runs",
                one.name,
                one.searched.join(", "),
                bound_elsewhere(one)
            ),
            vec![one.at.clone()],
        ));
    }
    Some((
        several_unresolved(&found),
        found.iter().map(|f| f.at.clone()).collect(),
    ))
}

/// Every unbound name at once (a rule author declares them from one run, not one run each),
/// those searched for in the same scopes said together.
fn several_unresolved(found: &[names::Unresolved]) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for f in found {
        let context = format!("searched {}{}", f.searched.join(", "), bound_elsewhere(f));
        match groups.iter_mut().find(|(c, _)| *c == context) {
            Some((_, names)) => names.push(format!("`{}`", f.name)),
            None => groups.push((context, vec![format!("`{}`", f.name)])),
        }
    }
    let each: Vec<String> = groups
        .iter()
        .map(|(context, names)| format!("{} ({context})", names.join(", ")))
        .collect();
    format!(
        "the edits read {} names that no scope they can see binds: {}; each a NameError when it runs",
        found.len(),
        each.join("; ")
    )
}

/// Where a name no scope of the read binds is bound out of its sight, as a clause.
fn bound_elsewhere(f: &names::Unresolved) -> String {
    if f.bound_in.is_empty() {
        String::new()
    } else {
        format!(
            "; it is bound only in {}, out of its sight",
            f.bound_in.join(", ")
        )
    }
}

/// Each planned edit's range in the output, with the text of `text` it replaced.
fn edit_spans<'t>(text: &'t str, planned: &[PlannedEdit]) -> Vec<(Range<usize>, &'t str)> {
    let shifts = edit::Shifts::new(planned);
    planned
        .iter()
        .map(|p| {
            let start = shifts.moved(p.edit.range.start);
            (
                start..start + p.edit.text.len(),
                &text[p.edit.range.clone()],
            )
        })
        .collect()
}

/// Records a failure in `survey` when `again`, the rules run on its output, edited anything:
/// a patch must be a fixed point.
pub(crate) fn check_fixed_point(path: &str, survey: &mut Survey, again: &Survey) {
    let Some(report) = again.rules.iter().find(|r| r.status == RuleStatus::Applied) else {
        return;
    };
    let at = report
        .matches
        .iter()
        .find_map(|m| m.edits.first())
        .map_or(0..0, |e| e.range.clone());
    let src = SourceFile::new(path, survey.output.clone()).named_source();
    let editors: Vec<&str> = survey
        .rules
        .iter()
        .filter(|r| r.status == RuleStatus::Applied)
        .map(|r| r.rule.as_str())
        .collect();
    let error = if editors.contains(&report.rule.as_str()) || editors.is_empty() {
        PatchError::NotIdempotent {
            rule: report.rule.clone(),
            path: path.to_string(),
            src,
            at: span(at),
        }
    } else {
        let quoted: Vec<String> = editors.iter().map(|r| format!("`{r}`")).collect();
        PatchError::NotAFixedPoint {
            rule: report.rule.clone(),
            path: path.to_string(),
            by: quoted.join(" and "),
            help: format!(
                "to have `{}` act on that output, give it `after: [{}]`; else make its pattern not match what those rules write",
                report.rule,
                editors.join(", ")
            ),
            src,
            at: span(at),
        }
    };
    survey.errors.push((vec![report.index], error));
}

/// The first error CPython would report in `output` that the step's input did not have. Only
/// the statements the edits touched are parsed (the tree's top-level statements: of the file,
/// or of the parsed regions); the whole texts are compared only when one of those
/// has an error, to tell a new error from one `text`, the input, already had.
/// Each line of `output` that an edit (ordered ranges) touches, once, in one forward pass:
/// searching back from each edit for its line's start cost a long line's length per edit.
fn edited_lines<'o>(output: &'o str, edited: &[Range<usize>]) -> impl Iterator<Item = &'o str> {
    let mut next_line = 0;
    let mut searched = 0;
    let mut line_start = 0;
    edited.iter().flat_map(move |e| {
        let (start, end) = (e.start.min(output.len()), e.end.min(output.len()));
        if let Some(i) = output[searched.min(start)..start].rfind('\n') {
            line_start = searched.min(start) + i + 1;
        }
        searched = searched.max(start);
        // Lines before `next_line` were given already.
        let from = line_start.max(next_line);
        // An edit ending before the last line end found ends on that line.
        let to = if end < next_line {
            next_line - 1
        } else {
            output[end..].find('\n').map_or(output.len(), |i| end + i)
        };
        next_line = next_line.max(to + 1);
        output.get(from..to).into_iter().flat_map(str::lines)
    })
}

fn cpython_error(
    text: &str,
    planned: &[PlannedEdit],
    output: &str,
    reparsed: &Parsed,
) -> Option<cpython::CpythonError> {
    let shifts = edit::Shifts::new(planned);
    let edited: Vec<Range<usize>> = planned
        .iter()
        .map(|p| {
            let start = shifts.moved(p.edit.range.start);
            start..start + p.edit.text.len()
        })
        .collect();
    // Edits are ordered: the first ending at or after a chunk's start says whether one
    // touches it (a search, not a scan of every edit for every statement).
    let touches = |r: &Range<usize>| {
        let first = edited.partition_point(|e| e.end < r.start);
        edited.get(first).is_some_and(|e| e.start <= r.end)
    };
    // The top-level statements of the tree (of a region parse, the regions' statements: a
    // region of many adjacent statements is not checked whole at every step).
    let root = reparsed.tree.root_node();
    let mut cursor = root.walk();
    let chunks: Vec<Range<usize>> = root
        .children(&mut cursor)
        .map(|n| n.byte_range())
        .filter(|r| touches(r))
        .collect();
    // Statements that make up most of the file are checked as the file, once: the check of
    // the final output before it is written is then the same question (`cpython::errors`).
    let touched: usize = chunks.iter().map(|c| c.len()).sum();
    if reparsed.regions.is_none() && touched > output.len() / 2 {
        return cpython::new_error(text, output);
    }
    let mut detached = false;
    let clean = chunks.iter().all(|chunk| {
        // A statement nested in a block is checked as the body of `if 1:`, at its own indent.
        let line_start = output[..chunk.start].rfind('\n').map_or(0, |i| i + 1);
        let text = &output[line_start..chunk.end];
        let indented = text.starts_with([' ', '\t']);
        detached |= indented;
        let wrapped;
        let text = if indented {
            wrapped = format!("if 1:\n{text}\n");
            wrapped.as_str()
        } else {
            text
        };
        cpython::chunk_errors(text, indented).is_empty()
    });
    // CPython's nesting limits count the blocks around a statement, which a statement checked
    // alone does not see: an edit whose lines stand that deep is checked in the whole file. A
    // top-level statement has no blocks around it: its check saw every block its lines are in.
    let deep = detached
        && edited_lines(output, &edited)
            .any(|l| l.len() - l.trim_start().len() >= compile_check::MAX_BLOCKS);
    // A tab/space mix anywhere makes CPython reject the whole file; the scan is cheap.
    if clean && !deep && cpython::tab_error(output).is_none() {
        return None;
    }
    cpython::new_error(text, output)
}

#[cfg(test)]
mod tests {
    use std::ops::Range;

    use super::edited_lines;

    #[test]
    fn each_line_an_edit_touches_is_given_once() {
        let text = "a = 1\n    b = f(1) + f(2)\nc = 3\nd = f(4\n  + 5)\ne = 6";
        let at = |s: &str| text.find(s).unwrap();
        let edits = vec![
            at("f(1)")..at("f(1)") + 4,
            at("f(2)")..at("f(2)") + 4,
            at("f(4")..at("+ 5)") + 4,
            at("6")..at("6") + 1,
        ];
        let lines: Vec<&str> = edited_lines(text, &edits).collect();
        assert_eq!(lines, ["    b = f(1) + f(2)", "d = f(4", "  + 5)", "e = 6"]);
        let at_start = [Range { start: 0, end: 0 }];
        assert_eq!(edited_lines(text, &at_start).collect::<Vec<_>>(), ["a = 1"]);
    }
}
