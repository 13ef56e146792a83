//! Reads the text DSL (`grammar/regraft.pest`) into the same value tree and span index as YAML.

use std::ops::Range;

use pest::Parser;
use pest::iterators::Pair;
use serde_yaml::{Mapping, Value};

use super::action::action_spec;
use super::error::did_you_mean;
use super::spans::{Path, Seg, SpanIndex};

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/regraft.pest"]
struct DslParser;

/// A DSL syntax error: where, what was expected (in words), and maybe a hint.
#[derive(Debug, Clone)]
pub struct DslSyntaxError {
    /// Byte span of the error.
    pub span: Range<usize>,
    /// What is wrong, e.g. "expected a value (a word, \"text\", `code`, a number or a list)".
    pub message: String,
    /// A hint such as a did-you-mean.
    pub help: Option<String>,
}

/// How deep lists may nest: the parser recurses once per level, and a rule has no use for more.
const MAX_NESTING: usize = 64;

/// Refuses lists nested deeper than `MAX_NESTING`, at the bracket that goes too deep, before
/// the recursive parser sees them (5,000 levels overflowed its stack). Brackets inside strings,
/// code and comments do not count.
fn check_nesting(text: &str) -> Result<(), DslSyntaxError> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'`' if text[i..].starts_with("```") => {
                i = text[i + 3..]
                    .find("```")
                    .map_or(bytes.len(), |end| i + 3 + end + 2);
            }
            b'`' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'`' && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(DslSyntaxError {
                        span: i..i + 1,
                        message: format!("lists nest deeper than {MAX_NESTING} levels here"),
                        help: Some(
                            "a rule's values are flat lists of names, globs or patterns".into(),
                        ),
                    });
                }
            }
            b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Parses DSL text into a list of rule mappings and the spans of their keys and values.
pub fn read(text: &str) -> Result<(Value, SpanIndex), DslSyntaxError> {
    check_nesting(text)?;
    let file = DslParser::parse(Rule::file, text)
        .map_err(|e| syntax_error(text, e))?
        .next()
        .expect("a successful parse yields the file");
    let mut spans = SpanIndex::new(0..text.len());
    let mut rules = Vec::new();
    for (i, rule) in file
        .into_inner()
        .filter(|p| p.as_rule() == Rule::rule)
        .enumerate()
    {
        let base = vec![Seg::Index(i)];
        spans.set_value(base.clone(), range(&rule));
        let mut map = Mapping::new();
        let mut inner = rule.into_inner();
        let keyword = inner.next().expect("rule keyword");
        let id = inner.next().expect("rule id");
        let id_path = child(&base, "id");
        spans.set_key(id_path.clone(), range(&keyword));
        spans.set_value(id_path, range(&id));
        map.insert("id".into(), Value::String(id.as_str().to_string()));
        for statement in inner {
            statement_into(statement, &base, &mut map, &mut spans, true)?;
        }
        rules.push(Value::Mapping(map));
    }
    Ok((Value::Sequence(rules), spans))
}

fn range(pair: &Pair<'_, Rule>) -> Range<usize> {
    let s = pair.as_span();
    s.start()..s.end()
}

fn child(path: &[Seg], key: &str) -> Path {
    let mut p = path.to_vec();
    p.push(Seg::Key(key.to_string()));
    p
}

/// Adds one statement's value to the rule mapping at the statement's key path.
fn statement_into(
    statement: Pair<'_, Rule>,
    base: &[Seg],
    map: &mut Mapping,
    spans: &mut SpanIndex,
    rule_level: bool,
) -> Result<(), DslSyntaxError> {
    let statement_span = range(&statement);
    let mut items: Vec<Pair<'_, Rule>> = statement.into_inner().collect();
    let value = match items.len() {
        0 | 1 => {
            let key = items.first().map_or("", |k| k.as_str());
            return Err(DslSyntaxError {
                span: statement_span.end..statement_span.end,
                message: format!("`{key}` needs a value after it"),
                help: Some("a statement is keys then a value, e.g. `phase pre_compile`".into()),
            });
        }
        _ => items.pop().expect("two or more items"),
    };
    let mut keys: Vec<(String, Range<usize>)> = Vec::new();
    for item in &items {
        if !matches!(item.as_rule(), Rule::key | Rule::word) {
            return Err(DslSyntaxError {
                span: range(item),
                message: "only the last item of a statement is a value; keys are plain words"
                    .into(),
                help: None,
            });
        }
        keys.push((item.as_str().to_string(), range(item)));
    }
    if rule_level && action_spec(&keys[0].0).is_some() {
        // `replace `...`` is shorthand for `action replace `...``.
        keys.insert(0, ("action".into(), keys[0].1.clone()));
    }
    let mut path = base.to_vec();
    let mut target = map;
    for (n, (key, key_span)) in keys.iter().enumerate() {
        path.push(Seg::Key(key.clone()));
        spans.set_key(path.clone(), key_span.clone());
        let last = n + 1 == keys.len();
        let existing = target.get(key.as_str()).cloned();
        if last {
            if existing.is_some() {
                return Err(duplicate(&keys, key_span.start..statement_span.end));
            }
            let converted = to_value(&value, &path, spans)?;
            spans.set_value(path.clone(), range(&value));
            target.insert(key.as_str().into(), converted);
            return Ok(());
        }
        match existing {
            None => {
                spans.set_value(path.clone(), key_span.start..statement_span.end);
                target.insert(key.as_str().into(), Value::Mapping(Mapping::new()));
            }
            Some(Value::Mapping(_)) => {}
            Some(_) => return Err(duplicate(&keys[..=n], key_span.start..statement_span.end)),
        }
        target = match target.get_mut(key.as_str()) {
            Some(Value::Mapping(m)) => m,
            _ => unreachable!("just ensured a mapping"),
        };
    }
    Ok(())
}

fn duplicate(keys: &[(String, Range<usize>)], span: Range<usize>) -> DslSyntaxError {
    let path: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
    DslSyntaxError {
        span,
        message: format!("`{}` is given twice in this rule", path.join(" ")),
        help: Some("give each key once; lists are written `[a, b]`".into()),
    }
}

/// Converts a value token into the value YAML would have loaded for it.
fn to_value(
    pair: &Pair<'_, Rule>,
    path: &[Seg],
    spans: &mut SpanIndex,
) -> Result<Value, DslSyntaxError> {
    Ok(match pair.as_rule() {
        Rule::string => Value::String(unescape(pair.clone().into_inner().as_str())),
        Rule::code => Value::String(pair.clone().into_inner().as_str().to_string()),
        Rule::code_block => Value::String(dedent(pair.clone().into_inner().as_str())),
        Rule::specifier => Value::String(pair.as_str().to_string()),
        Rule::list => Value::Sequence(
            pair.clone()
                .into_inner()
                .enumerate()
                .map(|(i, item)| {
                    let mut p = path.to_vec();
                    p.push(Seg::Index(i));
                    spans.set_value(p.clone(), range(&item));
                    to_value(&item, &p, spans)
                })
                .collect::<Result<_, _>>()?,
        ),
        Rule::block => {
            let mut map = Mapping::new();
            for statement in pair.clone().into_inner() {
                statement_into(statement, path, &mut map, spans, false)?;
            }
            Value::Mapping(map)
        }
        _ => word_value(pair.as_str()),
    })
}

/// A bare word: `true`/`false`, a number, or text.
pub fn word_value(word: &str) -> Value {
    match word {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(n) = word.parse::<u64>() {
        return Value::Number(n.into());
    }
    if word.contains('.')
        && word.chars().all(|c| c.is_ascii_digit() || c == '.')
        && let Ok(f) = word.parse::<f64>()
    {
        return Value::Number(f.into());
    }
    Value::String(word.to_string())
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The lines of a fenced block without the closing fence's line and the common indentation.
/// A blank line before the closing fence stands for a final line break, so a block can hold
/// a whole Python file exactly.
pub fn dedent(block: &str) -> String {
    let body = block.trim_end_matches([' ', '\t']);
    let body = body
        .strip_suffix("\r\n")
        .or_else(|| body.strip_suffix('\n'))
        .unwrap_or(body);
    let (body, final_break) = match body.strip_suffix('\n') {
        Some(rest) => (rest.strip_suffix('\r').unwrap_or(rest), true),
        None => (body, false),
    };
    let indent = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out = body
        .lines()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n");
    if final_break {
        out.push('\n');
    }
    out
}

fn phrase(expected: &Rule) -> &'static str {
    match expected {
        Rule::rule | Rule::rule_keyword => "`rule ID` to start a rule",
        Rule::rule_id => "a rule id (letters, digits, `_`, `-`, `.`)",
        Rule::statement | Rule::key => "a statement such as `match `...`` or `inside class NAME`",
        Rule::string => "a \"quoted string\"",
        Rule::code | Rule::code_block => "Python code in backticks",
        Rule::specifier => "a version specifier such as >=4.52",
        Rule::list => "a [list]",
        Rule::block => "a { block }",
        Rule::word => "a word",
        Rule::EOI => "the end of the file",
        Rule::string_inner => "the closing `\"`",
        Rule::code_inner => "the closing backtick",
        Rule::block_inner => "the closing ```",
        _ => "something else",
    }
}

fn syntax_error(text: &str, e: pest::error::Error<Rule>) -> DslSyntaxError {
    let at = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    let found: String = text[at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let (message, help) = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut phrases: Vec<&str> = positives.iter().map(phrase).collect();
            phrases.dedup();
            let message = match phrases.as_slice() {
                [] => "unexpected text".to_string(),
                [one] => format!("expected {one}"),
                [init @ .., last] => format!("expected {} or {last}", init.join(", ")),
            };
            let help = if positives.contains(&Rule::rule_keyword) && !found.is_empty() {
                did_you_mean(&found, &["rule"]).map(|s| format!("did you mean `{s}`?"))
            } else {
                None
            };
            (message, help)
        }
        pest::error::ErrorVariant::CustomError { message } => (message.clone(), None),
    };
    // Pest reports the farthest failure at the start of the token that failed; where that
    // token is an opened quote, fence or list, say so rather than list every alternative.
    let rest = &text[at..];
    let unclosed = if rest.starts_with("```") || rest.starts_with('`') && text[..at].ends_with("``")
    {
        Some(("this code block has no closing ```", None))
    } else if rest.starts_with('`') {
        Some((
            "this code has no closing backtick on its line",
            Some("for code over several lines, use a ``` fenced block"),
        ))
    } else if rest.starts_with('"') {
        Some((
            "this string has no closing `\"` on its line",
            Some("write a line break inside a string as \\n"),
        ))
    } else if rest.starts_with('[') {
        Some(("this list has no closing `]`", None))
    } else {
        None
    };
    let (message, help) = match unclosed {
        Some((m, h)) => (m.to_string(), h.map(str::to_string)),
        None => (message, help),
    };
    let (at, end) = if text[..at].ends_with("``") {
        (at - 2, at + 1)
    } else {
        (at, end)
    };
    DslSyntaxError {
        span: at..end,
        message,
        help,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_build_nested_keys() {
        let text = "rule r\n  inside class A  # the class\n  inside function f\n  match `f($X)`\n  remove_kwargs [a, b]\n  expect 2\n";
        let (value, spans) = read(text).unwrap();
        let rule = &value[0];
        assert_eq!(rule["id"], "r");
        assert_eq!(rule["inside"]["class"], "A");
        assert_eq!(rule["inside"]["function"], "f");
        assert_eq!(rule["match"], "f($X)");
        assert_eq!(rule["action"]["remove_kwargs"][1], "b");
        assert_eq!(rule["expect"], 2);
        let p = vec![
            Seg::Index(0),
            Seg::Key("inside".into()),
            Seg::Key("function".into()),
        ];
        assert_eq!(&text[spans.value(&p)], "f");
    }

    #[test]
    fn fenced_blocks_are_dedented() {
        assert_eq!(dedent("    if a:\n        b\n  "), "if a:\n    b");
    }
}
