//! Errors found while patching a target file, each pointing into that file.

use miette::{Diagnostic, SourceSpan};
use thiserror::Error;

/// A target or patching failure, rendered against the target's text.
#[derive(Debug, Error, Diagnostic)]
pub enum PatchError {
    /// The target is not valid Python; it is left untouched.
    #[error("{path} is not valid Python: {reason}")]
    #[diagnostic(
        code(regraft::target::syntax),
        help("regraft only edits files that parse; fix the syntax error first")
    )]
    TargetSyntax {
        /// The target's path.
        path: String,
        /// What the parser found.
        reason: String,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The first error node.
        #[label("first syntax error")]
        at: SourceSpan,
    },

    /// The target's lines end both in a lone `\r` and in `\n`; it is left untouched.
    #[error("{path} mixes line ends: a lone `\\r` here, `\\n` on line {lf_line}")]
    #[diagnostic(
        code(regraft::target::line_ends),
        help(
            "regraft edits files whose line ends are all `\\n`, all `\\r\\n` or all `\\r`: convert the file to one of them"
        )
    )]
    MixedLineEnds {
        /// The target's path.
        path: String,
        /// The line (as CPython counts) of the first `\n`.
        lf_line: usize,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The first lone `\r`.
        #[label("a lone `\\r` line end")]
        at: SourceSpan,
    },

    /// A rule found a different number of matches than it expects.
    #[error("drift: rule `{rule}` expects {expected} match(es) in {path}, found {found}")]
    #[diagnostic(code(regraft::drift))]
    Drift {
        /// The rule.
        rule: String,
        /// The target's path.
        path: String,
        /// What `expect` says.
        expected: String,
        /// How many matched.
        found: u64,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The scopes searched (or the matches found, when there were too many).
        #[label(collection)]
        labels: Vec<miette::LabeledSpan>,
        /// Where the rule looked.
        #[help]
        scope: String,
        /// Matches too far from the first to show in one snippet.
        #[related]
        far: Vec<Note>,
        /// The `regraft explain` command that shows the near misses and why each fails: the
        /// command line prints it after the diagnostic, on a line of its own (unwrapped, so it
        /// can be copied).
        explain: String,
    },

    /// Two edits overlap.
    #[error(
        "conflict: {} edit overlapping code in {path}",
        who_conflicts(first, second)
    )]
    #[diagnostic(
        code(regraft::conflict),
        help(
            "narrow one rule's pattern or scope (a rule whose match lies within another of its matches: `not_inside` that match), or make one rule run in a later phase"
        )
    )]
    Conflict {
        /// The rule whose edit comes first.
        first: String,
        /// The rule whose edit overlaps it.
        second: String,
        /// The target's path.
        path: String,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The first edit.
        #[label("edited by `{first}`")]
        first_at: SourceSpan,
        /// The second edit.
        #[label("edited by `{second}`")]
        second_at: SourceSpan,
    },

    /// An action cannot be carried out on a match.
    #[error("rule `{rule}` cannot apply `{action}` in {path}: {reason}")]
    #[diagnostic(code(regraft::action))]
    Action {
        /// The rule.
        rule: String,
        /// The action.
        action: String,
        /// The target's path.
        path: String,
        /// Why.
        reason: String,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The call site (and the signature, where one was read nearby).
        #[label(collection)]
        labels: Vec<miette::LabeledSpan>,
        /// What to do about it.
        #[help]
        help: Option<String>,
        /// Places too far from the first label to show in one snippet (a signature hundreds
        /// of lines above the call), each shown on its own.
        #[related]
        far: Vec<Note>,
    },

    /// A check-only rule (a pin) found the code not as it asserts: upstream drifted from what
    /// a patch depends on.
    #[error("pin `{rule}` fails in {path}: {reason}")]
    #[diagnostic(code(regraft::pin))]
    Pin {
        /// The rule.
        rule: String,
        /// The target's path.
        path: String,
        /// What does not hold.
        reason: String,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The site (and the signature, where one was read nearby).
        #[label(collection)]
        labels: Vec<miette::LabeledSpan>,
        /// What to do about it.
        #[help]
        help: Option<String>,
        /// Places too far from the first label to show in one snippet.
        #[related]
        far: Vec<Note>,
    },

    /// The patched text does not parse; nothing is written.
    #[error("patching {path} would produce invalid Python ({reason}); nothing was written")]
    #[diagnostic(
        code(regraft::result::syntax),
        help("the template of rule(s) {rules} does not fit where it was put")
    )]
    UnparseableResult {
        /// The target's path.
        path: String,
        /// What the parser found.
        reason: String,
        /// The rules whose edits went in.
        rules: String,
        /// The patched text.
        #[source_code]
        src: crate::source::Source,
        /// The first error node in the patched text.
        #[label("first syntax error in the patched text")]
        at: SourceSpan,
    },

    /// The patched text reads an attribute of `self` that the class does not have in the
    /// release the file belongs to (see `engine::attributes`).
    #[error(
        "patching {path} would read an attribute the class does not have ({reason}); nothing was written"
    )]
    #[diagnostic(
        code(regraft::result::attribute),
        help(
            "narrow the rule's `requires` to the releases whose class has it, guard the read (`getattr(self, \"name\", None)`), or declare it with `provides: [name]` where the runtime sets it; rule(s) {rules}"
        )
    )]
    UnknownAttribute {
        /// The target's path.
        path: String,
        /// Which attribute, and which classes were searched.
        reason: String,
        /// The rules whose edits went in.
        rules: String,
        /// The patched text.
        #[source_code]
        src: crate::source::Source,
        /// Where the new code reads it.
        #[label("read here; no class of its resolution order has it in this release")]
        at: SourceSpan,
    },

    /// The patched text reads a name nothing in the file provides (see `python::names`).
    #[error("patching {path} would leave a name undefined ({reason}); nothing was written")]
    #[diagnostic(
        code(regraft::result::name),
        help(
            "give the rule `imports: [\"import ...\"]` (added to the file) or `provides: [name]` (the runtime puts it in the namespace), or write the template without it; rule(s) {rules}"
        )
    )]
    UnresolvedName {
        /// The target's path.
        path: String,
        /// Which name, and why it does not resolve.
        reason: String,
        /// The rules whose edits went in.
        rules: String,
        /// The patched text.
        #[source_code]
        src: crate::source::Source,
        /// Where the new code reads it.
        #[label("read here, bound in no scope it sees")]
        at: SourceSpan,
        /// Where it reads the other names no scope binds, when there are several.
        #[label(collection, "and this, bound in no scope it sees")]
        others: Vec<SourceSpan>,
    },

    /// A rule that edited nothing matches what other rules wrote: applied again, the pack
    /// would edit the file again (not a fault of the rule's own output).
    #[error(
        "the rules are not a fixed point: rule `{rule}` did not edit {path}, but it matches what {by} wrote, so applying the rules again would edit it"
    )]
    #[diagnostic(code(regraft::result::idempotence))]
    NotAFixedPoint {
        /// The rule that would edit the output.
        rule: String,
        /// The target's path.
        path: String,
        /// The rules that edited the file, as a phrase (`` `a` and `b` ``).
        by: String,
        /// What to do.
        #[help]
        help: String,
        /// The patched text.
        #[source_code]
        src: crate::source::Source,
        /// Where it would edit.
        #[label("would be edited by `{rule}`")]
        at: SourceSpan,
    },

    /// An import a rule needs would rebind a name the module binds to something else.
    #[error(
        "rule `{rule}` needs `{import}`, but {path} binds `{name}` to something else: adding the import would shadow that binding"
    )]
    #[diagnostic(
        code(regraft::result::import),
        help(
            "import under another name (`import x as _x`) and write that name in the template, or rename the module's binding"
        )
    )]
    ImportClash {
        /// The rule.
        rule: String,
        /// The import statement.
        import: String,
        /// The name both bind.
        name: String,
        /// The target's path.
        path: String,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The binding there.
        #[label("`{name}` is bound here")]
        at: SourceSpan,
    },

    /// An edit stands in the file's header, where a rule's imports would go after it.
    #[error(
        "rule `{rule}` needs `{import}`, but an edit stands in {path}'s header, above where imports go: code there could read the name before its import runs"
    )]
    #[diagnostic(
        code(regraft::result::import),
        help("leave the file's header alone in the rules that need imports")
    )]
    ImportPlace {
        /// The rule.
        rule: String,
        /// The import statement.
        import: String,
        /// The target's path.
        path: String,
        /// The target's text.
        #[source_code]
        src: crate::source::Source,
        /// The edit there.
        #[label("edited here")]
        at: SourceSpan,
    },

    /// Applying the rules to their own output would change it again.
    #[error("rule `{rule}` is not idempotent: applied to its own output it edits {path} again")]
    #[diagnostic(
        code(regraft::result::idempotence),
        help("make the pattern stop matching what the action produces")
    )]
    NotIdempotent {
        /// The rule.
        rule: String,
        /// The target's path.
        path: String,
        /// The patched text.
        #[source_code]
        src: crate::source::Source,
        /// The second edit.
        #[label("would be edited again")]
        at: SourceSpan,
    },
}

/// A place in the target worth showing beside a diagnostic, in a snippet of its own.
#[derive(Debug, Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(severity(Advice))]
pub struct Note {
    /// What the place is.
    pub message: String,
    /// The target's text.
    #[source_code]
    pub src: crate::source::Source,
    /// The place.
    #[label("here")]
    pub at: SourceSpan,
}

impl PatchError {
    /// The rule the failure concerns, where one rule does (a conflict names the first).
    pub fn rule_id(&self) -> Option<&str> {
        match self {
            PatchError::TargetSyntax { .. }
            | PatchError::MixedLineEnds { .. }
            | PatchError::UnparseableResult { .. }
            | PatchError::UnresolvedName { .. }
            | PatchError::UnknownAttribute { .. } => None,
            PatchError::Drift { rule, .. }
            | PatchError::Action { rule, .. }
            | PatchError::Pin { rule, .. }
            | PatchError::NotIdempotent { rule, .. }
            | PatchError::NotAFixedPoint { rule, .. }
            | PatchError::ImportClash { rule, .. }
            | PatchError::ImportPlace { rule, .. } => Some(rule),
            PatchError::Conflict { first, .. } => Some(first),
        }
    }

    /// The command showing why a drift error's rule found what it found, where it is one.
    pub fn explain_command(&self) -> Option<&str> {
        match self {
            PatchError::Drift { explain, .. } => Some(explain),
            _ => None,
        }
    }

    /// A one-word name for the kind of failure (used in JSON output).
    pub fn kind(&self) -> &'static str {
        match self {
            PatchError::TargetSyntax { .. } => "target-syntax",
            PatchError::MixedLineEnds { .. } => "line-ends",
            PatchError::Drift { .. } => "drift",
            PatchError::Conflict { .. } => "conflict",
            PatchError::Action { .. } => "action",
            PatchError::Pin { .. } => "pin",
            PatchError::UnparseableResult { .. } => "unparseable-result",
            PatchError::UnresolvedName { .. } => "unresolved-name",
            PatchError::UnknownAttribute { .. } => "unknown-attribute",
            PatchError::NotIdempotent { .. } | PatchError::NotAFixedPoint { .. } => {
                "not-idempotent"
            }
            PatchError::ImportClash { .. } | PatchError::ImportPlace { .. } => "import-clash",
        }
    }
}

/// Who a conflict is between: two rules, or two matches of one.
fn who_conflicts(first: &str, second: &str) -> String {
    match first == second {
        true => format!("two matches of rule `{first}`"),
        false => format!("rule `{first}` and rule `{second}`"),
    }
}
