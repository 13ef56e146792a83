//! The rule model: plain data that both rule syntaxes load into.
//!
//! Values that diagnostics point at carry the byte span they came from, but spans never take
//! part in equality, so a rule loaded from YAML equals the same rule loaded from the DSL.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use pep440_rs::VersionSpecifiers;

use crate::source::SourceFile;

pub use super::spans::{Snippet, Spanned};

/// Where a rule came from, for diagnostics; never part of equality.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The rule file.
    pub file: SourceFile,
    /// The span of the rule within it.
    pub span: Range<usize>,
}

impl Origin {
    /// The pack the rule belongs to: its file's name without extension (`layer-checkpointing`
    /// for `rules/layer-checkpointing.yaml`).
    pub fn pack(&self) -> String {
        std::path::Path::new(self.file.name())
            .file_stem()
            .map_or_else(
                || self.file.name().to_string(),
                |s| s.to_string_lossy().to_string(),
            )
    }
}

impl PartialEq for Origin {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// When in the patcher's life a rule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Phase {
    /// At import, before anything is compiled.
    Init,
    /// On source about to be handed to the compiler (the default).
    #[default]
    PreCompile,
    /// On the compiler's output.
    PostCompile,
}

impl Phase {
    /// All phases, in the order they run.
    pub const ALL: [Phase; 3] = [Phase::Init, Phase::PreCompile, Phase::PostCompile];

    /// The name used in rule files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Init => "init",
            Phase::PreCompile => "pre_compile",
            Phase::PostCompile => "post_compile",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Phase {
    /// The phase called `name`, or a message saying which names there are: for command-line
    /// and API arguments.
    pub fn named(name: &str) -> Result<Phase, String> {
        name.parse().map_err(|()| {
            let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
            format!("`{name}` is not a phase ({})", names.join(", "))
        })
    }
}

impl FromStr for Phase {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        Phase::ALL.into_iter().find(|p| p.name() == s).ok_or(())
    }
}

/// A package and the PEP 440 versions of it a rule applies to.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// The package name, normalised (lower case, runs of `-_.` as `-`).
    pub package: Spanned<String>,
    /// The specifiers, e.g. `>=4.52,<5`.
    pub specifiers: Spanned<VersionSpecifiers>,
}

/// Normalises a distribution name as PEP 503 does, so `Transformers` and `transformers` agree.
pub fn normalize_package(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_separator = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_separator {
                out.push('-');
            }
            in_separator = true;
        } else {
            out.extend(c.to_lowercase());
            in_separator = false;
        }
    }
    out
}

/// How a scope names the class or function it selects.
#[derive(Debug, Clone)]
pub enum NameFilter {
    /// The exact name.
    Exact(Spanned<String>),
    /// A regular expression the whole name must match.
    Regex(Spanned<regex::Regex>),
}

impl NameFilter {
    /// Whether `name` is selected.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NameFilter::Exact(exact) => exact.value == name,
            NameFilter::Regex(re) => re.value.is_match(name),
        }
    }

    /// The span of the filter in the rule file.
    pub fn span(&self) -> Range<usize> {
        match self {
            NameFilter::Exact(s) => s.span.clone(),
            NameFilter::Regex(s) => s.span.clone(),
        }
    }
}

/// Which enclosing class or function a rule looks in: by name, and by what it holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScopeFilter {
    /// Its name; `None` selects any.
    pub name: Option<NameFilter>,
    /// It must hold a match of this pattern somewhere.
    pub has: Option<Snippet>,
    /// It must hold no match of any of these patterns (`lacks: P` or `lacks: {any: [...]}`).
    pub lacks: Vec<Snippet>,
    /// It must hold exactly this many matches of `has` ("exactly one `nn.ModuleList`").
    pub count: Option<u64>,
    /// For a class: one of its bases, as written in the class header (`GradientCheckpointingLayer`,
    /// `nn.Module`).
    pub extends: Option<Spanned<String>>,
}

impl ScopeFilter {
    /// A filter by name alone.
    pub fn named(name: NameFilter) -> Self {
        ScopeFilter {
            name: Some(name),
            ..ScopeFilter::default()
        }
    }

    /// Whether the name `name` is selected.
    pub fn matches_name(&self, name: &str) -> bool {
        self.name.as_ref().is_none_or(|n| n.matches(name))
    }

    /// Whether the filter asks more of a scope than its name.
    pub fn has_predicates(&self) -> bool {
        self.has.is_some() || !self.lacks.is_empty() || self.extends.is_some()
    }
}

impl fmt::Display for ScopeFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name}")?,
            None => write!(f, "any")?,
        }
        if let Some(base) = &self.extends {
            write!(f, " extending `{}`", base.value)?;
        }
        if let Some(has) = &self.has {
            match self.count {
                Some(n) => write!(f, " that has exactly {n} `{}`", has.text.trim())?,
                None => write!(f, " that has `{}`", has.text.trim())?,
            }
        }
        for (i, lacks) in self.lacks.iter().enumerate() {
            let lead = if i == 0 { " that lacks" } else { " and" };
            write!(f, "{lead} `{}`", lacks.text.trim())?;
        }
        Ok(())
    }
}

impl fmt::Display for NameFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameFilter::Exact(name) => write!(f, "`{}`", name.value),
            NameFilter::Regex(re) => write!(f, "a name matching /{}/", original_regex(&re.value)),
        }
    }
}

/// The user's regex without the anchors the loader wraps around it.
pub fn original_regex(re: &regex::Regex) -> &str {
    let s = re.as_str();
    s.strip_prefix("^(?:")
        .and_then(|s| s.strip_suffix(")$"))
        .unwrap_or(s)
}

impl PartialEq for NameFilter {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (NameFilter::Exact(a), NameFilter::Exact(b)) => a == b,
            (NameFilter::Regex(a), NameFilter::Regex(b)) => a.value.as_str() == b.value.as_str(),
            _ => false,
        }
    }
}

/// Where in a file a rule looks; every part is optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Inside {
    /// An enclosing class.
    pub class: Option<ScopeFilter>,
    /// An enclosing function or method (within `class` when both are given).
    pub function: Option<ScopeFilter>,
    /// An enclosing `for` loop, by header patterns tried in order (`loop: {any: [...]}`; one
    /// for a plain string; none: no loop asked for), whose metavariables `match` may use.
    pub loop_header: Vec<Snippet>,
}

pub use super::action::Action;

/// How many matches a rule expects in each file it selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// At least this many.
    pub min: u64,
    /// At most this many, if bounded.
    pub max: Option<u64>,
    /// Count in each selected class or function rather than in the whole file, so a rule over
    /// many classes keeps drift detection for each.
    pub per: Option<Per>,
    /// Count over every file of the run (`per: run`) rather than in each: a rule across a
    /// tree keeps a drift check though most files hold none of its sites.
    pub run: bool,
}

/// What `expect` counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// Each class the rule's `inside.class` selects (every class, without one).
    Class,
    /// Each function the rule's `inside.function` selects (every function, without one).
    Function,
}

impl Per {
    /// The name used in rule files.
    pub fn name(self) -> &'static str {
        match self {
            Per::Class => "class",
            Per::Function => "function",
        }
    }
}

impl Expect {
    /// At least `n` matches in each file.
    pub fn at_least(n: u64) -> Self {
        Self {
            min: n,
            max: None,
            per: None,
            run: false,
        }
    }

    /// Exactly `n` matches in each file.
    pub fn exactly(n: u64) -> Self {
        Self {
            min: n,
            max: Some(n),
            per: None,
            run: false,
        }
    }

    /// Whether `count` satisfies the expectation.
    pub fn admits(&self, count: u64) -> bool {
        count >= self.min && self.max.is_none_or(|max| count <= max)
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max {
            Some(max) if max == self.min => write!(f, "exactly {max}"),
            Some(max) => write!(f, "{} to {max}", self.min),
            None => write!(f, "at least {}", self.min),
        }?;
        match self.per {
            Some(per) => write!(f, " per {}", per.name()),
            None if self.run => write!(f, " over the run"),
            None => Ok(()),
        }
    }
}

/// One declarative patch.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Unique name of the rule.
    pub id: Spanned<String>,
    /// What the rule is for, in a sentence.
    pub description: Option<String>,
    /// Version gates; the rule is active only when all hold.
    pub requires: Vec<Requirement>,
    /// Where the patch is no longer needed: when all of these hold (and `requires` does), the
    /// rule is retired — skipped, and shown `retired` rather than drifting.
    pub fixed_upstream: Vec<Requirement>,
    /// Rules that apply together in each file: if an active member fails (or misses its
    /// `expect`), none of the group's edits is applied there.
    pub group: Option<Spanned<String>>,
    /// A family of rules that patch one thing across version ranges: `lint` checks that the
    /// members' ranges neither overlap nor leave a hole.
    pub family: Option<Spanned<String>>,
    /// When the rule runs.
    pub phase: Phase,
    /// Globs selecting the files the rule applies to; empty means every file.
    pub files: Vec<Spanned<String>>,
    /// Enclosing scopes a match must lie in.
    pub inside: Inside,
    /// The Python pattern to find: one, or alternatives tried in order (`match: {any: [...]}`),
    /// the first that matches a site winning there. Never empty.
    pub patterns: Vec<Snippet>,
    /// A pattern that, found within a match, leaves that match alone (already patched).
    pub unless: Option<Snippet>,
    /// A pattern that, found around a match (an enclosing node), leaves that match alone.
    pub not_inside: Option<Snippet>,
    /// Where each match must stand (`at: top_level`, `at: [top_level, last]`): a site
    /// elsewhere is no match.
    pub at: Vec<Position>,
    /// Rules of the same phase whose output this rule sees.
    pub after: Vec<Spanned<String>>,
    /// Conditions on what metavariables bound, by name (without `$`), in the order written.
    pub constraints: Vec<(Spanned<String>, Constraint)>,
    /// What to do with each match.
    pub action: Action,
    /// The actions `match` alternatives carry (`{any: [{match: P, action: A}, ...]}`), one per
    /// pattern, `None` where the alternative takes the rule's `action`; empty when none carries
    /// its own.
    pub branch_actions: Vec<Option<Action>>,
    /// How many matches each selected file must have.
    pub expect: Option<Expect>,
    /// Every edit must keep the file's line count and every other line at its number.
    pub preserve_lines: bool,
    /// Keyword arguments of `match` must stand in the pattern's order (by default they match
    /// wherever they stand).
    pub ordered: bool,
    /// File-level source probes: the rule runs only on files that pass them.
    pub when: When,
    /// What a missed `expect` does: fail (default), warn, or pass silently.
    pub on_miss: Policy,
    /// What a site the action refuses does: fail the file (default), or be left alone and
    /// reported (warn) or only shown in JSON and the matrix (skip), the other sites applying.
    pub on_refuse: Policy,
    /// Test cases carried in the rule.
    pub tests: Vec<TestCase>,
    /// Import statements the rule's edits need: added once to each file it edits (beside the
    /// file's imports), never shadowing another binding of a name.
    pub imports: Vec<Spanned<String>>,
    /// Names the runtime provides in the patched module's namespace (a patcher's helpers): the
    /// name check takes them as bound.
    pub provides: Vec<Spanned<String>>,
    /// Entry points (`package.module.Class.method`) from which the release's own code must
    /// call every function the rule edits; where none does, the rule is `unreached`.
    pub reached_from: Vec<Spanned<String>>,
    /// What the patch must change in what the code computes, judged by `regraft test`.
    pub effect: Option<Effect>,
    /// Where the rule was read from.
    pub origin: Origin,
}

/// `effect`: Python run in a case's module as it was and as patched, where `value` must come
/// out as `original` and `patched` say (each a Python expression), or differ where neither is
/// given: proof that the edit changes what the code computes, not only its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// Statements run in the module's namespace before `value` is read.
    pub run: Option<Spanned<String>>,
    /// The expression compared.
    pub value: Spanned<String>,
    /// What `value` must equal on the module as it was.
    pub original: Option<Spanned<String>>,
    /// What `value` must equal on the patched module.
    pub patched: Option<Spanned<String>>,
}

/// `where` for one metavariable: conditions on what it bound, all of which must hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Constraint {
    /// The bound text must contain a match of this regular expression.
    pub regex: Option<Spanned<RegexSource>>,
    /// The bound text must contain no match of this regular expression.
    pub not_regex: Option<Spanned<RegexSource>>,
    /// The bound node must be of one of these tree-sitter-python kinds (`identifier`,
    /// `call`, ...); empty: any kind.
    pub kind: Vec<Spanned<String>>,
    /// The bound node must be of none of these kinds.
    pub not_kind: Vec<Spanned<String>>,
    /// The bound node must hold a match of this pattern.
    pub has: Option<Snippet>,
}

/// A regular expression as written, compiled; compared by its text.
#[derive(Debug, Clone)]
pub struct RegexSource(pub regex::Regex);

impl PartialEq for RegexSource {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

/// Source probes at file level, for gates that depend on what upstream code looks like.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct When {
    /// The file must contain a match of this pattern.
    pub has: Option<Snippet>,
    /// The file must contain no match of this pattern.
    pub lacks: Option<Snippet>,
    /// The file's text must contain this.
    pub contains: Option<Spanned<String>>,
    /// The file's text must not contain this.
    pub lacks_text: Option<Spanned<String>>,
    /// Where `has` and `lacks` look: the whole file (`None`), or the class or function that
    /// encloses each match, with the match's bindings — then they decide per site.
    pub scope: Option<Per>,
    /// Per site: the callee's signature must take (or lack) these parameters.
    pub signature: Option<SignatureProbe>,
}

impl When {
    /// Whether any probe is set.
    pub fn is_empty(&self) -> bool {
        self.has.is_none()
            && self.lacks.is_none()
            && self.contains.is_none()
            && self.lacks_text.is_none()
            && self.signature.is_none()
    }
}

/// `signature: {of: $CLS.forward, has: [...], lacks: [...], order: [...]}`: what a callee's
/// signature must look like at a site.
#[derive(Debug, Clone, PartialEq)]
pub struct SignatureProbe {
    /// `Class.method` or `function`; a part may be a metavariable the match bound.
    pub of: Spanned<String>,
    /// Parameters it must take.
    pub has: Vec<Spanned<String>>,
    /// Parameters it must not take.
    pub lacks: Vec<Spanned<String>>,
    /// Parameters it must take in this order (others may stand between them).
    pub order: Vec<Spanned<String>>,
}

/// A place in the code a match must stand at (`at:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The statement holding the match stands at module level: a top-level function, not a
    /// method or a function nested in another.
    TopLevel,
    /// The statement holding the match (a run's last statement) is the last of its block.
    Last,
}

impl Position {
    /// Every position, as written in rule files.
    pub const ALL: [(&'static str, Position); 2] =
        [("top_level", Position::TopLevel), ("last", Position::Last)];

    /// The name used in rule files.
    pub fn name(self) -> &'static str {
        Position::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("", |(n, _)| n)
    }
}

/// What one kind of failure of a rule does: a missed `expect` (`on_miss`) or an action that
/// refuses a site (`on_refuse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// It is an error (exit 3).
    #[default]
    Error,
    /// It is reported as a warning; the run still succeeds.
    Warn,
    /// It is silent in `apply`, but `matrix`, `explain` and JSON still show it.
    Skip,
}

impl Policy {
    /// The name used in rule files.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Error => "error",
            Policy::Warn => "warn",
            Policy::Skip => "skip",
        }
    }
}

impl Rule {
    /// The action taken where `match` alternative `branch` matched: its own, or the rule's.
    pub fn action_of(&self, branch: usize) -> &Action {
        self.branch_actions
            .get(branch)
            .and_then(Option::as_ref)
            .unwrap_or(&self.action)
    }

    /// Every action the rule takes, each once: the rule's, or each alternative's.
    pub fn actions(&self) -> Vec<&Action> {
        let mut all: Vec<&Action> = Vec::new();
        for action in (0..self.patterns.len().max(1)).map(|i| self.action_of(i)) {
            if !all.iter().any(|a| std::ptr::eq(*a, action)) {
                all.push(action);
            }
        }
        all
    }
}

/// What a rule test case expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestExpectation {
    /// The patched text equals the stored snapshot.
    Snapshot,
    /// The rule leaves the source as it is.
    Unchanged,
    /// Patching fails with this kind of error: `drift`, `conflict` or `error` (any other).
    Error(String),
}

/// The kinds of error a test case may expect.
pub const TEST_ERROR_KINDS: &[&str] = &["drift", "conflict", "error"];

/// One test case of a rule: a source, the versions to gate with, and what should happen.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    /// The case's name, unique within the rule; also its snapshot's file name.
    pub name: Spanned<String>,
    /// The source to patch.
    pub before: String,
    /// Package versions, name → version text.
    pub versions: Vec<(String, String)>,
    /// Run only this phase.
    pub phase: Option<Phase>,
    /// The path the rule's `files` globs see; derived from them when absent.
    pub path: Option<String>,
    /// What should happen.
    pub expectation: TestExpectation,
}
