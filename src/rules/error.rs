//! Errors in rule files, each pointing at the exact span it is about.

use std::ops::Range;

use miette::{Diagnostic, LabeledSpan};
use thiserror::Error;

use crate::source::{SourceFile, span};

/// What is wrong with a rule file.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RuleErrorKind {
    /// The file is not UTF-8.
    #[error("rule file is not valid UTF-8")]
    NotUtf8,
    /// serde_yaml could not read the YAML.
    #[error("invalid YAML: {0}")]
    Yaml(String),
    /// The DSL parser could not read the text.
    #[error("invalid rule syntax: {0}")]
    DslSyntax(String),
    /// `fmt` would drop a comment.
    #[error("fmt would drop this comment")]
    CommentWouldBeLost,
    /// The file holds nothing.
    #[error("rule file holds no rule")]
    NoRules,
    /// A key the schema does not have.
    #[error("unknown key `{key}` in {within}")]
    UnknownKey {
        /// The key as written.
        key: String,
        /// What it stands in ("a rule", "`inside`", …).
        within: String,
    },
    /// A key the schema needs.
    #[error("{within} needs `{key}`")]
    MissingKey {
        /// The missing key.
        key: String,
        /// What lacks it.
        within: String,
    },
    /// A value of the wrong YAML type.
    #[error("`{key}` must be {expected}, not {found}")]
    WrongType {
        /// The key whose value is wrong.
        key: String,
        /// What the schema wants.
        expected: String,
        /// What was written.
        found: String,
    },
    /// A value of the right type that is still not allowed.
    #[error("invalid `{key}`: {reason}")]
    InvalidValue {
        /// The key whose value is wrong.
        key: String,
        /// Why.
        reason: String,
    },
    /// A PEP 440 specifier that does not parse.
    #[error("invalid version specifier for `{package}`: {reason}")]
    Specifier {
        /// The package it is for.
        package: String,
        /// pep440_rs's reason.
        reason: String,
    },
    /// A pattern that is not Python.
    #[error("{what} is not valid Python: {reason}")]
    PatternSyntax {
        /// Which pattern ("`match`", "`inside.loop`", "the `replace` template").
        what: String,
        /// What the parser found.
        reason: String,
    },
    /// A `$` that starts no metavariable.
    #[error("malformed metavariable: {reason}")]
    Metavariable {
        /// What is wrong with it.
        reason: String,
    },
    /// An action name the engine does not know.
    #[error("unknown action `{name}`")]
    UnknownAction {
        /// The name as written.
        name: String,
    },
    /// An action that needs a call where the pattern has none.
    #[error("`{action}` edits a call, but the pattern contains no call")]
    ActionNeedsCall {
        /// The action.
        action: String,
    },
    /// An action that needs a function where the pattern matches something else.
    #[error("`{action}` edits a function, but the pattern is not a `def`")]
    ActionNeedsFunction {
        /// The action.
        action: String,
    },
    /// `after` names a rule that does not exist.
    #[error("`after` names `{id}`, which is no rule here")]
    UnknownAfter {
        /// The id.
        id: String,
    },
    /// `after` names a rule of a later phase.
    #[error("`after` names `{id}`, which runs in a later phase ({phase})")]
    AfterLaterPhase {
        /// The id.
        id: String,
        /// Its phase.
        phase: String,
    },
    /// `after` chains that loop.
    #[error("rules wait for each other in a cycle: {cycle}")]
    AfterCycle {
        /// The ids around the cycle.
        cycle: String,
    },
    /// A metavariable used but bound by nothing.
    #[error(
        "`${name}` is used here but bound by no pattern: not `match`, `inside.loop` or an `inside` scope's `has`"
    )]
    UnboundMetavariable {
        /// The metavariable's name.
        name: String,
    },
    /// A rule is active but a package it requires has no known version.
    #[error("rule `{rule}` requires `{package}`, whose version is not known")]
    UnknownVersion {
        /// The rule.
        rule: String,
        /// The package.
        package: String,
    },
    /// A `requires` that no version satisfies.
    #[error("no version of `{package}` satisfies `{specifiers}`")]
    Unsatisfiable {
        /// The package.
        package: String,
        /// The specifiers.
        specifiers: String,
    },
    /// A rule that runs but does not say how many matches it expects.
    #[error("rule `{rule}` has no `expect`: if upstream drifts it silently stops applying")]
    NoExpect {
        /// The rule.
        rule: String,
    },
    /// A check rule (a pin) with no case on which it fails: nothing shows that it can.
    #[error(
        "pin `{rule}` has no test case on which it fails: nothing shows it can fail when upstream changes"
    )]
    PinNeverFails {
        /// The rule.
        rule: String,
    },
    /// A template that writes a match of its own rule's pattern: a second run edits the output
    /// again, and `apply` refuses it as no fixed point.
    #[error(
        "the template writes a match of the rule's own `match`: applied to its output, the rule would edit it again"
    )]
    TemplateRematches,
    /// A loop metavariable that `match` never uses.
    #[error("`${name}` is bound by `inside.loop` but `match` never uses it")]
    UnusedLoopBinding {
        /// The metavariable.
        name: String,
    },
    /// A metavariable bound in several places whose bindings cannot (or only by accident)
    /// agree.
    #[error("`${name}` can hardly match: {reason}")]
    BindingsDisagree {
        /// The metavariable.
        name: String,
        /// Why its bindings disagree.
        reason: String,
    },
    /// A family whose members' version ranges overlap or leave a hole.
    #[error("family `{family}`: {reason}")]
    FamilyRanges {
        /// The family.
        family: String,
        /// The overlap or hole.
        reason: String,
    },
    /// Two rules with one id.
    #[error("duplicate rule id `{id}`")]
    DuplicateId {
        /// The id.
        id: String,
    },
}

impl RuleErrorKind {
    fn code(&self) -> &'static str {
        match self {
            RuleErrorKind::NotUtf8 => "regraft::rule::encoding",
            RuleErrorKind::Yaml(_) => "regraft::rule::yaml",
            RuleErrorKind::DslSyntax(_) => "regraft::rule::syntax",
            RuleErrorKind::NoRules => "regraft::rule::empty",
            RuleErrorKind::CommentWouldBeLost => "regraft::fmt::comment",
            RuleErrorKind::UnknownKey { .. } => "regraft::rule::unknown_key",
            RuleErrorKind::MissingKey { .. } => "regraft::rule::missing_key",
            RuleErrorKind::WrongType { .. } => "regraft::rule::type",
            RuleErrorKind::InvalidValue { .. } => "regraft::rule::value",
            RuleErrorKind::Specifier { .. } => "regraft::rule::specifier",
            RuleErrorKind::PatternSyntax { .. } => "regraft::rule::pattern",
            RuleErrorKind::Metavariable { .. } => "regraft::rule::metavariable",
            RuleErrorKind::UnknownAction { .. } => "regraft::rule::action",
            RuleErrorKind::ActionNeedsCall { .. } | RuleErrorKind::ActionNeedsFunction { .. } => {
                "regraft::rule::action_target"
            }
            RuleErrorKind::UnknownAfter { .. }
            | RuleErrorKind::AfterLaterPhase { .. }
            | RuleErrorKind::AfterCycle { .. } => "regraft::rule::order",
            RuleErrorKind::UnboundMetavariable { .. } => "regraft::rule::unbound",
            RuleErrorKind::DuplicateId { .. } => "regraft::rule::duplicate_id",
            RuleErrorKind::UnknownVersion { .. } => "regraft::rule::unknown_version",
            RuleErrorKind::Unsatisfiable { .. } => "regraft::lint::unsatisfiable",
            RuleErrorKind::NoExpect { .. } => "regraft::lint::no_expect",
            RuleErrorKind::PinNeverFails { .. } => "regraft::lint::pin_never_fails",
            RuleErrorKind::TemplateRematches => "regraft::lint::template_rematches",
            RuleErrorKind::UnusedLoopBinding { .. } => "regraft::lint::unused_binding",
            RuleErrorKind::BindingsDisagree { .. } => "regraft::lint::bindings_disagree",
            RuleErrorKind::FamilyRanges { .. } => "regraft::lint::family",
        }
    }

    fn label(&self) -> &'static str {
        match self {
            RuleErrorKind::NotUtf8 => "first invalid byte",
            RuleErrorKind::Yaml(_) | RuleErrorKind::DslSyntax(_) => "here",
            RuleErrorKind::NoRules => "empty",
            RuleErrorKind::CommentWouldBeLost => "not kept by fmt",
            RuleErrorKind::UnknownKey { .. } => "unknown key",
            RuleErrorKind::MissingKey { .. } => "in this",
            RuleErrorKind::WrongType { .. } => "wrong type",
            RuleErrorKind::InvalidValue { .. } => "invalid value",
            RuleErrorKind::Specifier { .. } => "not a PEP 440 specifier",
            RuleErrorKind::PatternSyntax { .. } => "not valid Python here",
            RuleErrorKind::Metavariable { .. } => "here",
            RuleErrorKind::UnknownAction { .. } => "unknown action",
            RuleErrorKind::ActionNeedsCall { .. } => "no call in this pattern",
            RuleErrorKind::ActionNeedsFunction { .. } => "not a function pattern",
            RuleErrorKind::UnknownAfter { .. } => "unknown rule",
            RuleErrorKind::AfterLaterPhase { .. } => "later phase",
            RuleErrorKind::AfterCycle { .. } => "part of the cycle",
            RuleErrorKind::UnboundMetavariable { .. } => "unbound",
            RuleErrorKind::DuplicateId { .. } => "defined again here",
            RuleErrorKind::UnknownVersion { .. } => "version unknown",
            RuleErrorKind::Unsatisfiable { .. } => "empty range",
            RuleErrorKind::NoExpect { .. } => "this rule",
            RuleErrorKind::PinNeverFails { .. } => "this pin",
            RuleErrorKind::TemplateRematches => "matches the rule's pattern",
            RuleErrorKind::UnusedLoopBinding { .. } => "bound here",
            RuleErrorKind::BindingsDisagree { .. } => "bound here",
            RuleErrorKind::FamilyRanges { .. } => "this member",
        }
    }

    /// Whether the problem stops the rule from loading (error) or only deserves attention.
    pub fn severity(&self) -> miette::Severity {
        match self {
            RuleErrorKind::NoExpect { .. }
            | RuleErrorKind::PinNeverFails { .. }
            | RuleErrorKind::TemplateRematches
            | RuleErrorKind::UnusedLoopBinding { .. }
            | RuleErrorKind::BindingsDisagree { .. }
            | RuleErrorKind::FamilyRanges { .. } => miette::Severity::Warning,
            _ => miette::Severity::Error,
        }
    }

    /// The id of the rule the problem names, where it names one.
    pub fn rule_id(&self) -> Option<&str> {
        match self {
            RuleErrorKind::UnknownVersion { rule, .. }
            | RuleErrorKind::NoExpect { rule }
            | RuleErrorKind::PinNeverFails { rule } => Some(rule),
            RuleErrorKind::DuplicateId { id } => Some(id),
            _ => None,
        }
    }

    /// The diagnostic code, e.g. `regraft::rule::unknown_key`.
    pub fn code_name(&self) -> &'static str {
        self.code()
    }
}

/// A rule-file error at a span, with an optional hint.
#[derive(Debug, Error, Clone)]
#[error("{kind}")]
pub struct RuleError {
    /// What is wrong.
    pub kind: RuleErrorKind,
    /// The rule file's name.
    pub file_name: String,
    /// Where in the rule file.
    pub span: Range<usize>,
    /// A hint such as a did-you-mean.
    pub help: Option<String>,
    /// The rule file.
    pub file: SourceFile,
    /// The id of the rule it is in, where it is in one that has an id (set by `lint`).
    pub rule: Option<String>,
    source_code: crate::source::Source,
}

impl RuleError {
    /// An error of `kind` at `span` of `file`.
    pub fn new(kind: RuleErrorKind, file: &SourceFile, span: Range<usize>) -> Self {
        Self {
            kind,
            file_name: file.name().to_string(),
            span,
            help: None,
            file: file.clone(),
            rule: None,
            source_code: file.named_source_in("yaml"),
        }
    }

    /// Adds a hint.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl Diagnostic for RuleError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.kind.code()))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(self.kind.severity())
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source_code)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(self.kind.label().to_string()),
            span(self.span.clone()),
        ))))
    }
}

/// The closest of `candidates` to `word`, if any is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Errors gathered while reading or compiling a rule, each part on its own, so `lint` can
/// report every mistake of a rule at once where loading stops at the first (which is the
/// first gathered: parts are read in the order the loader always read them).
#[derive(Debug, Default)]
pub struct Gather(Vec<RuleError>);

impl Gather {
    /// The value of `result`, or `None` with its error kept.
    pub fn ok<T>(&mut self, result: Result<T, RuleError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                self.0.push(e);
                None
            }
        }
    }

    /// Keeps every error of a part that reports several.
    pub fn extend(&mut self, errors: impl IntoIterator<Item = RuleError>) {
        self.0.extend(errors);
    }

    /// The errors gathered.
    pub fn into_errors(self) -> Vec<RuleError> {
        self.0
    }

    /// Whether nothing has gone wrong so far.
    pub fn is_clean(&self) -> bool {
        self.0.is_empty()
    }

    /// The errors gathered, or `value()` where there are none.
    pub fn finish<T>(self, value: impl FnOnce() -> Option<T>) -> Result<T, Vec<RuleError>> {
        if self.0.is_empty()
            && let Some(v) = value()
        {
            return Ok(v);
        }
        Err(self.0)
    }
}
