//! The Python extension module `regraft._native`, built by maturin with the `python` feature.
//!
//! It is a thin layer over the library: rules load and compile as for the CLI, a source string
//! goes through the same [`Engine`], and every failure becomes an exception whose `str()` is the
//! rendered diagnostic. The Python package `regraft` (python/regraft) wraps it with the public
//! API: installed-package versions, `on_error`, and typed reports.

use std::path::PathBuf;

use std::str::FromStr;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::compile::RuleSet;
use crate::engine::{Engine, PatchError, Target};
use crate::error::Error;
use crate::modules::MapModules;
use crate::report::Palette;
use crate::report::diagnostic::{primary_location, render};
use crate::rules::Syntax;
use crate::rules::model::Phase;
use crate::versions::VersionEnv;

create_exception!(
    regraft,
    RegraftError,
    PyException,
    "Any regraft failure; str() is one line (`rule-id: message (file:line:col)`), the rendered diagnostic is `.diagnostic`."
);
create_exception!(
    regraft,
    RuleError,
    RegraftError,
    "A rule file or rule text is wrong, or a rule's package version is unknown."
);
create_exception!(
    regraft,
    DriftError,
    RegraftError,
    "A rule found a different number of matches than it expects: upstream drifted."
);
create_exception!(
    regraft,
    ConflictError,
    RegraftError,
    "Two rules edit overlapping code."
);
create_exception!(
    regraft,
    ParseError,
    RegraftError,
    "The source, or the patched result, is not valid Python."
);
create_exception!(
    regraft,
    ActionError,
    RegraftError,
    "An action cannot be carried out on a match, or its result is not a fixed point."
);

/// The exception `error` raises in Python, carrying its location and rule.
fn to_py_err(py: Python<'_>, error: &Error) -> PyErr {
    let diagnostic = render(error, Palette::new(false));
    let location = primary_location(error);
    // str(e) is one line, `rule-id: message (file:line:col)`; the rendered diagnostic is
    // `e.diagnostic`.
    let mut message = error.to_string();
    if let Some(rule) = error.rule_id()
        && !message.starts_with(rule)
    {
        message = format!("{rule}: {message}");
    }
    if let Some(l) = &location {
        let path = l.path.as_deref().unwrap_or("<string>");
        message = format!("{message} ({path}:{}:{})", l.line, l.column);
    }
    let err = match error {
        // A version given for the rules' packages is input to the rules, as `RuleError` says
        // in the README (unknown package versions are one too).
        Error::Rule(_) | Error::Version(_) | Error::Load(_) => RuleError::new_err(message),
        Error::Patch(p) => match **p {
            PatchError::Drift { .. } | PatchError::Pin { .. } => DriftError::new_err(message),
            PatchError::Conflict { .. } => ConflictError::new_err(message),
            PatchError::TargetSyntax { .. }
            | PatchError::MixedLineEnds { .. }
            | PatchError::UnparseableResult { .. }
            | PatchError::UnresolvedName { .. }
            | PatchError::UnknownAttribute { .. } => ParseError::new_err(message),
            PatchError::Action { .. }
            | PatchError::NotIdempotent { .. }
            | PatchError::NotAFixedPoint { .. }
            | PatchError::ImportClash { .. }
            | PatchError::ImportPlace { .. } => ActionError::new_err(message),
        },
        Error::Target(_)
        | Error::Case(_)
        | Error::MatrixTarget { .. }
        | Error::Fetch(_)
        | Error::Write(_)
        | Error::Config(_)
        | Error::Usage(_) => RegraftError::new_err(message),
    };
    let value = err.value(py);
    let _ = value.setattr("diagnostic", diagnostic);
    // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion,
    // and the exception is still worth raising then.
    let _ = value.setattr("rule_id", error.rule_id());
    let _ = value.setattr("kind", error.kind());
    let _ = value.setattr("path", location.as_ref().and_then(|l| l.path.clone()));
    let _ = value.setattr("line", location.as_ref().map(|l| l.line));
    let _ = value.setattr("column", location.as_ref().map(|l| l.column));
    err
}

fn parse_phase(phase: Option<&str>) -> Result<Option<Phase>, Error> {
    phase.map(Phase::named).transpose().map_err(Error::Usage)
}

fn version_env(versions: &[(String, String)]) -> Result<VersionEnv, Error> {
    let mut env = VersionEnv::default();
    for (package, version) in versions {
        env.insert_version(package, version)?;
    }
    Ok(env)
}

/// What one call patches: the source, its file name, versions, phase and signature context.
struct Request<'a> {
    source: &'a str,
    filename: Option<&'a str>,
    versions: VersionEnv,
    phase: Option<Phase>,
    context: Option<&'a str>,
    /// Other modules' sources by dotted name, for signatures the source imports.
    modules: Option<MapModules>,
    /// The top-level class or function the source is (a live object patched at run time).
    unit: Option<&'a str>,
    /// The path the rules' `files` globs see: with a dotted module name, the module's path
    /// below its import root (`pkg/sub/mod.py`), whatever folder the file was read from.
    selected_as: Option<String>,
}

/// The signature context a call gives: one source, or modules by dotted name (with the dotted
/// name of the module being patched, for its relative imports).
type Context<'a> = (
    Option<&'a str>,
    Option<Vec<(String, String)>>,
    Option<&'a str>,
);

/// The context as Python passes it: `(source, modules, module, unit)`, each optional.
type ContextArg = (
    Option<String>,
    Option<Vec<(String, String)>>,
    Option<String>,
    Option<String>,
);

impl<'a> Request<'a> {
    fn new(
        source: &'a str,
        filename: Option<&'a str>,
        versions: &[(String, String)],
        phase: Option<&str>,
        (context, modules, module): Context<'a>,
    ) -> Result<Self, Error> {
        let modules = modules.map(|sources| MapModules {
            current: module.unwrap_or_default().to_string(),
            current_is_package: filename.is_some_and(|f| {
                std::path::Path::new(f)
                    .file_name()
                    .is_some_and(|n| n == "__init__.py")
            }),
            sources: sources
                .into_iter()
                .map(|(name, text)| (name, text.into()))
                .collect(),
        });
        Ok(Self {
            source,
            filename,
            versions: version_env(versions)?,
            phase: parse_phase(phase)?,
            context,
            modules,
            unit: None,
            selected_as: filename.zip(module).map(|(f, m)| below_import_root(f, m)),
        })
    }

    /// The engine for this request over `rules`, refusing rules whose package is unknown.
    fn engine<'r>(&'r self, rules: &'r RuleSet) -> Result<Engine<'r>, Error> {
        let mut engine = Engine::new(rules, &self.versions, self.phase);
        if self.filename.is_none() {
            engine = engine.selecting_all_files();
        }
        if let Some(context) = self.context {
            engine = engine.with_signature_context(context);
        }
        if let Some(modules) = &self.modules {
            engine = engine.with_modules(modules);
        }
        if let Some(unit) = self.unit {
            engine = engine.for_unit(unit);
        }
        if let Some(path) = &self.selected_as {
            engine = engine.selecting_as(path);
        }
        engine.check_versions_known_at(self.target().path)?;
        Ok(engine)
    }

    fn target(&self) -> Target<'_> {
        // With modules by name, the source's own path is its dotted name: relative imports
        // resolve against it.
        let path = match &self.modules {
            Some(m) if !m.current.is_empty() && self.filename.is_none() => m.current.as_str(),
            _ => self.filename.unwrap_or("<string>"),
        };
        Target {
            path,
            source: self.source,
        }
    }
}

/// Where each rule's edits wrote in the output: rule id and a range of `str` indices.
type Written = Vec<(String, usize, usize)>;

/// `written`'s byte ranges of `output` as character indices (what Python's `str` counts), in
/// one pass over the text.
fn char_ranges(output: &str, written: Vec<(String, std::ops::Range<usize>)>) -> Written {
    let mut bounds: Vec<usize> = written.iter().flat_map(|(_, r)| [r.start, r.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut chars = std::collections::HashMap::with_capacity(bounds.len());
    let mut next = bounds.iter().peekable();
    for (count, (byte, _)) in output
        .char_indices()
        .chain([(output.len(), ' ')])
        .enumerate()
    {
        while let Some(&b) = next.next_if(|&&b| b <= byte) {
            chars.insert(b, count);
        }
    }
    written
        .into_iter()
        .map(|(rule, r)| (rule, chars[&r.start], chars[&r.end]))
        .collect()
}

/// Where the module `module` (dotted) read from `filename` lies below the folder it is imported
/// from: `pkg/sub/mod.py`, or `pkg/sub/__init__.py` for a package — the path `apply` run in
/// site-packages and the pytest plugin see, so a rule's `files` select the same files there and
/// at run time.
fn below_import_root(filename: &str, module: &str) -> String {
    let base = std::path::Path::new(filename)
        .file_name()
        .map_or_else(|| "source.py".into(), |n| n.to_string_lossy());
    let parts: Vec<&str> = module.split('.').filter(|p| !p.is_empty()).collect();
    let folders = if base.starts_with("__init__.") {
        &parts[..]
    } else {
        &parts[..parts.len().saturating_sub(1)]
    };
    folders
        .iter()
        .copied()
        .chain([base.as_ref()])
        .collect::<Vec<_>>()
        .join("/")
}

/// A compiled rule set.
#[pyclass(frozen, module = "regraft._native")]
pub struct NativeRules {
    set: RuleSet,
}

#[pymethods]
impl NativeRules {
    /// Loads the rule files `path` names (a file or a folder of them).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        py.detach(|| RuleSet::load(&[path]))
            .map(|set| Self { set })
            .map_err(|e| to_py_err(py, &Error::from(e)))
    }

    /// Parses rules from text in `format` ("yaml" or "dsl"); `name` labels diagnostics.
    #[staticmethod]
    fn parse(py: Python<'_>, text: &str, format: &str, name: &str) -> PyResult<Self> {
        let syntax = match format {
            "yaml" => Syntax::Yaml,
            "dsl" => Syntax::Dsl,
            other => {
                let e = Error::Usage(format!("`{other}` is not a rule format (yaml, dsl)"));
                return Err(to_py_err(py, &e));
            }
        };
        crate::rules::load_text(name, text, syntax)
            .and_then(RuleSet::compile)
            .map(|set| Self { set })
            .map_err(|e| to_py_err(py, &Error::from(e)))
    }

    /// The texts of the rule files the rules came from, each once, ordered by file name: the
    /// very text loaded, for a fingerprint of the set (a second read could see a newer file).
    fn texts(&self) -> Vec<String> {
        let mut files: Vec<(&str, &str)> = self
            .set
            .rules
            .iter()
            .map(|r| (r.rule.origin.file.name(), r.rule.origin.file.text()))
            .collect();
        files.sort_unstable();
        files.dedup_by_key(|(name, _)| *name);
        files
            .into_iter()
            .map(|(_, text)| text.to_string())
            .collect()
    }

    /// Each rule file's `(text, format, name)`, in load order, each once: what
    /// [`NativeRules::parse_many`] reads back into the same rules (a child interpreter gets
    /// this snapshot, never a second read of files that may have changed since).
    fn sources(&self) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = Vec::new();
        for rule in &self.set.rules {
            let file = &rule.rule.origin.file;
            if out.iter().any(|(_, _, name)| name == file.name()) {
                continue;
            }
            let format = match Syntax::of(std::path::Path::new(file.name())) {
                Some(Syntax::Dsl) => "dsl",
                _ => "yaml",
            };
            out.push((
                file.text().to_string(),
                format.into(),
                file.name().to_string(),
            ));
        }
        out
    }

    /// Parses several rule texts (`(text, format, name)`, as [`NativeRules::sources`] gives
    /// them) into one set.
    #[staticmethod]
    fn parse_many(py: Python<'_>, sources: Vec<(String, String, String)>) -> PyResult<Self> {
        let mut rules = Vec::new();
        for (text, format, name) in &sources {
            let syntax = match format.as_str() {
                "yaml" => Syntax::Yaml,
                "dsl" => Syntax::Dsl,
                other => {
                    let e = Error::Usage(format!("`{other}` is not a rule format (yaml, dsl)"));
                    return Err(to_py_err(py, &e));
                }
            };
            let read = crate::rules::load_text(name, text, syntax)
                .map_err(|e| to_py_err(py, &Error::from(e)))?;
            rules.extend(read);
        }
        RuleSet::compile(rules)
            .map(|set| Self { set })
            .map_err(|e| to_py_err(py, &Error::from(e)))
    }

    /// These rules without those `names` turns off (`REGRAFT_DISABLE`): a rule is off where
    /// its id, its `group`, its `family` or its file's name without extension (the pack) is
    /// listed, or `*` is; `after:` references to rules turned off are dropped. `None` where no
    /// rule is left.
    fn without(&self, py: Python<'_>, names: Vec<String>) -> PyResult<Option<Self>> {
        let off = |r: &crate::compile::CompiledRule| {
            let pack = r.rule.origin.pack();
            names.iter().any(|n| {
                n == "*"
                    || n == r.id()
                    || r.rule.group.as_ref().is_some_and(|g| &g.value == n)
                    || r.rule.family.as_ref().is_some_and(|f| &f.value == n)
                    || &pack == n
            })
        };
        let dropped: Vec<String> = self
            .set
            .rules
            .iter()
            .filter(|r| off(r))
            .map(|r| r.id().to_string())
            .collect();
        let kept: Vec<crate::rules::model::Rule> = self
            .set
            .rules
            .iter()
            .filter(|r| !off(r))
            .map(|r| {
                let mut rule = r.rule.clone();
                rule.after.retain(|a| !dropped.contains(&a.value));
                rule
            })
            .collect();
        if kept.is_empty() {
            return Ok(None);
        }
        RuleSet::compile(kept)
            .map(|set| Some(Self { set }))
            .map_err(|e| to_py_err(py, &Error::from(e)))
    }

    /// The rule ids, in load order.
    fn ids(&self) -> Vec<String> {
        self.set.rules.iter().map(|r| r.id().to_string()).collect()
    }

    /// The packages the rules' `requires` name (normalised), each once, sorted.
    fn packages(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .set
            .rules
            .iter()
            .flat_map(|r| r.rule.requires.iter().map(|q| q.package.value.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Whether any rule would run on the file `filename` (on its top-level class or function
    /// `unit`): one selects it and its version gate is not closed. `False` means patching it
    /// would change nothing, so its source need not be read. Raises as `apply` does where a
    /// rule's package has no known version.
    #[pyo3(signature = (filename, versions, phase, unit, module=None))]
    fn would_run(
        &self,
        py: Python<'_>,
        filename: Option<&str>,
        versions: Vec<(String, String)>,
        phase: Option<&str>,
        unit: Option<&str>,
        module: Option<&str>,
    ) -> PyResult<bool> {
        let result = (|| {
            let mut request = Request::new("", filename, &versions, phase, (None, None, module))?;
            request.unit = unit;
            let engine = request.engine(&self.set)?;
            Ok::<_, Error>(engine.any_would_run(request.target().path))
        })();
        result.map_err(|e| to_py_err(py, &e))
    }

    /// Patches `source`; returns the output and the drift of `on_miss: warn` rules as
    /// exception instances to warn with. `compiled`: the caller compiles the output next and
    /// asks again without it where CPython refuses it (see `Engine::compiled_by_caller`).
    #[pyo3(signature = (source, filename, versions, phase, context, compiled=false))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one by one
    fn apply(
        &self,
        py: Python<'_>,
        source: &str,
        filename: Option<&str>,
        versions: Vec<(String, String)>,
        phase: Option<&str>,
        context: ContextArg,
        compiled: bool,
    ) -> PyResult<(String, Vec<PyErr>, String, Written)> {
        let result = py.detach(|| {
            let (source_context, modules, module, unit) = context;
            let context = (source_context.as_deref(), modules, module.as_deref());
            let mut request = Request::new(source, filename, &versions, phase, context)?;
            request.unit = unit.as_deref();
            let mut engine = request.engine(&self.set)?;
            if compiled {
                engine = engine.compiled_by_caller();
            }
            engine.patch(request.target()).map_err(Error::from)
        });
        let patched = result.map_err(|e| to_py_err(py, &e))?;
        let warnings = patched
            .warnings
            .into_iter()
            .map(|w| to_py_err(py, &Error::from(w)))
            .collect();
        // The per-rule reports too, as `check` gives them: a caller that patches and wants to
        // know what changed needs one run, not two.
        let json = serde_json::to_string(&patched.rules).expect("reports serialize");
        let written = char_ranges(&patched.output, patched.written);
        Ok((patched.output, warnings, json, written))
    }

    /// Runs every rule on `source` without failing on the first error: returns the per-rule
    /// reports as JSON (the shape of `apply --format json`'s `rules`) and, by rule id, the
    /// exception each failing or missing rule would raise. `whole`: parse the whole file
    /// (the literal prefilter and statement regions off), the reference the statement-local
    /// path is held to by the matching oracle.
    #[pyo3(signature = (source, filename, versions, phase, context, whole=false))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one by one
    fn check<'py>(
        &self,
        py: Python<'py>,
        source: &str,
        filename: Option<&str>,
        versions: Vec<(String, String)>,
        phase: Option<&str>,
        context: ContextArg,
        whole: bool,
    ) -> PyResult<(String, Bound<'py, PyDict>)> {
        let result = py.detach(|| {
            let (source_context, modules, module, unit) = context;
            let context = (source_context.as_deref(), modules, module.as_deref());
            let mut request = Request::new(source, filename, &versions, phase, context)?;
            request.unit = unit.as_deref();
            let mut engine = request.engine(&self.set)?;
            if whole {
                engine = engine.without_prefilter();
            }
            engine.survey(request.target()).map_err(Error::from)
        });
        let survey = result.map_err(|e| to_py_err(py, &e))?;
        let errors = PyDict::new(py);
        let failures = survey
            .errors
            .into_iter()
            .chain(survey.misses.into_iter().map(|(r, e)| (vec![r], e)));
        for (rules, error) in failures {
            let exception = to_py_err(py, &Error::from(error)).into_value(py);
            for rule in rules {
                let id = self.set.rule(rule).id();
                if !errors.contains(id)? {
                    errors.set_item(id, &exception)?;
                }
            }
        }
        let json = serde_json::to_string(&survey.rules).expect("reports serialize");
        Ok((json, errors))
    }
}

/// The extension module.
/// Runs the `regraft` command line with `argv` (the program name first); returns its exit
/// code. The wheel's `regraft` console script calls this, so `pip install regraft` gives the
/// command and the module from one native library.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| crate::cli::run_with(argv))
}

/// Whether `version` satisfies the PEP 440 `specifiers` (`">=4.46,<5"`): the support window
/// `install(supports=...)` checks, by the same rules the rules' `requires` use. A malformed
/// specifier or version is a `RuleError`.
#[pyfunction]
fn admits(specifiers: &str, version: &str) -> PyResult<bool> {
    let bad =
        |what: &str, e: &dyn std::fmt::Display| PyErr::new::<RuleError, _>(format!("{what}: {e}"));
    let specs = pep440_rs::VersionSpecifiers::from_str(specifiers)
        .map_err(|e| bad(&format!("`{specifiers}` is not a PEP 440 specifier"), &e))?;
    let version = pep440_rs::Version::from_str(version)
        .map_err(|e| bad(&format!("`{version}` is not a PEP 440 version"), &e))?;
    Ok(crate::versions::admits(&specs, &version))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(admits, m)?)?;
    m.add_class::<NativeRules>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RegraftError", py.get_type::<RegraftError>())?;
    m.add("RuleError", py.get_type::<RuleError>())?;
    m.add("DriftError", py.get_type::<DriftError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("ActionError", py.get_type::<ActionError>())?;
    Ok(())
}
