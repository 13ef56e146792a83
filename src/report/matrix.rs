//! Renderings of the drift matrix: a terminal table and Markdown.

use std::fmt::Write as _;

use super::color::{BAD, GOOD, NOTE, Palette, QUIET};
use crate::matrix::{Row, Status};

/// The distinct values of `key` over `rows`, in order of first appearance.
fn distinct<'a>(rows: &'a [Row], key: impl Fn(&'a Row) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&key(r)) {
            out.push(key(r));
        }
    }
    out
}

/// The distinct targets of `rows`, in order.
fn columns(rows: &[Row]) -> Vec<String> {
    distinct(rows, |r| &r.target)
        .into_iter()
        .map(str::to_string)
        .collect()
}

fn cell_text(row: &Row) -> String {
    match row.status {
        Status::Ok => format!("ok ({})", row.matches),
        Status::Redundant => format!("redundant ({})", row.matches),
        other => other.name().to_string(),
    }
}

/// The table as Markdown: rules down, targets across.
pub fn markdown(rows: &[Row]) -> String {
    let cols = columns(rows);
    let mut out = String::from("| rule |");
    for c in &cols {
        let _ = write!(out, " {} |", c.replace("==", " "));
    }
    out.push_str("\n| --- |");
    for _ in &cols {
        out.push_str(" --- |");
    }
    out.push('\n');
    let rules = distinct(rows, |r| &r.rule);
    for rule in rules {
        let _ = write!(out, "| `{rule}` |");
        for c in &cols {
            let cell = rows
                .iter()
                .find(|r| r.rule == rule && &r.target == c)
                .map(|r| {
                    let text = cell_text(r);
                    if r.status.is_failure() {
                        format!("**{text}**")
                    } else {
                        text
                    }
                })
                .unwrap_or_default();
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out
}

/// The table for a terminal, coloured by `palette`, followed by the reasons for failures.
pub fn human(rows: &[Row], palette: Palette) -> String {
    table(rows, palette, false)
}

/// The matrix with releases as rows and rules as columns: the layout for many releases,
/// which as columns would run far past a terminal's width.
pub fn human_transposed(rows: &[Row], palette: Palette) -> String {
    table(rows, palette, true)
}

/// Which field of a row names its line or its column.
type Key = fn(&Row) -> &str;

/// The table with a row per rule and a column per target, or the other way round.
fn table(rows: &[Row], palette: Palette, by_release: bool) -> String {
    let (row_of, col_of): (Key, Key) = if by_release {
        (|r| &r.target, |r| &r.rule)
    } else {
        (|r| &r.rule, |r| &r.target)
    };
    let cols = distinct(rows, col_of);
    let lines = distinct(rows, row_of);
    let head = if by_release { "release" } else { "rule" };
    let first_width = lines
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(0)
        .max(head.len());
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            rows.iter()
                .filter(|r| col_of(r) == *c)
                .map(|r| cell_text(r).len())
                .max()
                .unwrap_or(0)
                .max(c.chars().count())
        })
        .collect();
    let mut out = format!("{head:first_width$}");
    for (c, w) in cols.iter().zip(&widths) {
        let _ = write!(out, "  {c:w$}");
    }
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    out.push('\n');
    for line in &lines {
        let _ = write!(out, "{line:first_width$}");
        for (c, w) in cols.iter().zip(&widths) {
            let Some(row) = rows.iter().find(|r| row_of(r) == *line && col_of(r) == *c) else {
                continue;
            };
            let text = format!("{:w$}", cell_text(row));
            let style = match row.status {
                Status::Ok | Status::Retired => GOOD,
                Status::Inactive => QUIET,
                Status::Redundant => NOTE,
                _ => BAD,
            };
            let paint = palette.paint(style, &text);
            let _ = write!(out, "  {paint}");
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
    let failures: Vec<&Row> = rows.iter().filter(|r| r.status.is_failure()).collect();
    if !failures.is_empty() {
        out.push('\n');
        for r in failures {
            let status = r.status.name();
            if r.message.starts_with(status) {
                let _ = writeln!(out, "{} on {}: {}", r.rule, r.target, r.message);
            } else {
                let _ = writeln!(out, "{} on {}: {status}: {}", r.rule, r.target, r.message);
            }
        }
    }
    out
}
