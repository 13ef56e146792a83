//! The literal clauses a rule requires of a file, of every match and of every match's
//! top-level statement, for the prefilter: the pattern's own literals, and what `where`
//! conditions require of the text the pattern binds — a regex's required literals (as ripgrep
//! reads them with `regex-syntax`), a `has` pattern's literals.

use regex_syntax::hir::literal::{ExtractKind, Extractor};

use super::CompiledRule;
use crate::prefilter::Clauses;

/// Above this many literals a regex's alternation says too little to be worth a clause.
const MAX_ALTERNATIVES: usize = 32;

/// One of these literals is in every text `regex` matches; `None` where no finite set of
/// non-empty literals is (`.*`, `\w+`, a regex that matches the empty text). The prefix
/// literals of every match, else the suffix ones (`.*softmax`): whichever is finite, with the
/// longer shortest literal.
pub(crate) fn required_by(regex: &regex::Regex) -> Option<Vec<String>> {
    let hir = regex_syntax::parse(regex.as_str()).ok()?;
    let of = |kind| {
        let seq = Extractor::new().kind(kind).extract(&hir);
        let literals = seq.literals()?;
        if literals.is_empty() || literals.len() > MAX_ALTERNATIVES {
            return None;
        }
        literals
            .iter()
            .map(|l| {
                String::from_utf8(l.as_bytes().to_vec())
                    .ok()
                    .filter(|s| !s.is_empty())
            })
            .collect::<Option<Vec<String>>>()
    };
    let shortest = |c: &Vec<String>| c.iter().map(String::len).min().unwrap_or(0);
    match (of(ExtractKind::Prefix), of(ExtractKind::Suffix)) {
        (Some(p), Some(s)) => Some(if shortest(&s) > shortest(&p) { s } else { p }),
        (p, s) => p.or(s),
    }
}

impl CompiledRule {
    /// The clauses every match satisfies within the part of it the anchor lies in: the
    /// pattern's anchor literals, and what `where` requires of the metavariables bound there.
    pub fn anchor_clauses(&self) -> Clauses {
        let mut out: Clauses = self
            .pattern
            .anchor_literals()
            .into_iter()
            .map(|l| vec![l])
            .collect();
        out.extend(self.bound_clauses());
        dedup(out)
    }

    /// What the `where` conditions require of the text of metavariables every match binds in
    /// its anchor part (a condition on a name bound elsewhere, or only by a scope, says nothing
    /// of the match).
    fn bound_clauses(&self) -> Clauses {
        let bound = self.pattern.anchor_metavars();
        let mut out = Clauses::new();
        for c in self.constraints.iter().filter(|c| bound.contains(&c.name)) {
            out.extend(c.regex.as_ref().and_then(required_by));
            if let Some(has) = &c.has {
                out.extend(has.anchor_literals().into_iter().map(|l| vec![l]));
            }
        }
        out
    }

    /// The clauses any file this rule matches in must satisfy: its literals (see
    /// [`CompiledRule::literals`]) and what `where` requires of what its matches bind.
    pub fn needs(&self) -> Clauses {
        let mut out: Clauses = self.literals().into_iter().map(|l| vec![l]).collect();
        out.extend(self.bound_clauses());
        dedup(out)
    }

    /// The clauses the top-level statement of every match satisfies: the anchor clauses, or
    /// else the literals of what an enclosing scope must hold.
    pub fn statement_clauses(&self) -> Clauses {
        self.statement_clauses_given(self.anchor_clauses())
    }

    /// As [`CompiledRule::statement_clauses`], with the anchor clauses already read.
    pub(super) fn statement_clauses_given(&self, own: Clauses) -> Clauses {
        if !own.is_empty() {
            return own;
        }
        self.statement_literals()
            .into_iter()
            .map(|l| vec![l])
            .collect()
    }
}

fn dedup(mut clauses: Clauses) -> Clauses {
    for clause in &mut clauses {
        clause.sort();
        clause.dedup();
    }
    clauses.sort();
    clauses.dedup();
    clauses
}

#[cfg(test)]
mod tests {
    use super::required_by;

    fn of(regex: &str) -> Option<Vec<String>> {
        required_by(&regex::Regex::new(regex).unwrap())
    }

    #[test]
    fn a_regex_requires_its_alternations_literals_where_every_match_holds_one() {
        let mut softmax = of(r"(nn\.functional|\bF)\.softmax$").unwrap();
        softmax.sort();
        assert_eq!(softmax, ["F.softmax", "nn.functional.softmax"]);
        assert_eq!(of(r"^(q_proj|k_proj)$").unwrap(), ["q_proj", "k_proj"]);
        assert_eq!(of(r".*softmax").unwrap(), ["softmax"]);
        // What may match without a literal requires none.
        for free in [r".*", r"\w+", r"^$", r"(softmax)?", r"x|.*", ""] {
            assert_eq!(of(free), None, "{free}");
        }
    }

    #[test]
    fn every_text_a_regex_matches_holds_a_literal_it_requires() {
        // Against the regex itself: each text it matches contains one of the literals.
        let cases = [
            (r"(?i)max", vec!["SoftMax(x)", "softmax", "x.SOFTMAX"]),
            (r"^self\.(q|k|v)_proj$", vec!["self.q_proj", "self.v_proj"]),
            (r"a[bc]d|xy", vec!["abd", "acd", "zxy"]),
            (
                r"\bF\.(soft|log_soft)max\(",
                vec!["F.softmax(", "  F.log_softmax(x"],
            ),
        ];
        for (regex, texts) in cases {
            let re = regex::Regex::new(regex).unwrap();
            let literals = required_by(&re).unwrap();
            for text in texts {
                assert!(re.is_match(text), "{regex} {text}");
                assert!(
                    literals.iter().any(|l| text.contains(l.as_str())),
                    "{regex}: {text}"
                );
            }
        }
    }
}
