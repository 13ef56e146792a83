//! The literal prefilter: which rules could match a file, decided from its bytes alone.
//!
//! Every match of a rule contains the identifiers and string parts its pattern spells out, and
//! lies in a file that contains the names of the scopes it asks for. One Aho-Corasick scan of a
//! file finds which of all rules' literals occur; a rule whose literals do not all occur cannot
//! match, and a file where no rule can match is not parsed at all.
//!
//! A rule's pattern literals also lie inside each of its matches, so whichever of them is
//! rarest in a file is the rule's anchor there: only the statements holding an anchor need
//! parsing, or (where a file is parsed whole) querying.

use aho_corasick::AhoCorasick;

/// Where a rule's matches can be in one file: at the occurrences of one literal of its
/// pattern, on lines that hold its other literals too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor<'p> {
    /// Byte offsets of the literal's occurrences, in order.
    pub offsets: Vec<usize>,
    /// The pattern's other literals.
    pub also: Vec<&'p str>,
    /// Where every match is an assignment: what its logical line must show.
    pub assignment: Option<AssignmentShape>,
}

/// What the logical line of every match of an assignment pattern shows in its bytes:
/// tree-sitter-python has assignments only in expression statements (or chained in other
/// assignments), so the `=` stands outside all brackets and the assignment ends its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssignmentShape {
    /// The punctuation of the pattern's tokens outside strings (`python::regions::punctuation`).
    pub punctuation: u32,
    /// The closing bracket the pattern ends with, if it does: the line ends with it too.
    pub closes_with: Option<u8>,
}

impl Anchor<'static> {
    /// Plain offsets: statements wanted whatever their lines hold.
    pub fn at(offsets: Vec<usize>) -> Self {
        Anchor {
            offsets,
            also: Vec::new(),
            assignment: None,
        }
    }
}

/// The literals of every rule, compiled into one automaton.
#[derive(Debug)]
pub struct Prefilter {
    automaton: Option<AhoCorasick>,
    literals: Vec<String>,
    /// For each rule, the indexes of the literals it needs.
    needs: Vec<Vec<usize>>,
    /// For each rule, the indexes of the literals every match contains (its pattern's).
    inside_matches: Vec<Vec<usize>>,
}

impl Prefilter {
    /// Builds the prefilter from each rule's required literals and, among them, those that lie
    /// inside every match of the rule.
    pub fn new(rule_literals: &[Vec<String>], inside_matches: &[Vec<String>]) -> Self {
        fn intern<'a>(literals: &mut Vec<&'a str>, l: &'a str) -> usize {
            literals.iter().position(|x| *x == l).unwrap_or_else(|| {
                literals.push(l);
                literals.len() - 1
            })
        }
        fn index<'a>(literals: &mut Vec<&'a str>, lists: &'a [Vec<String>]) -> Vec<Vec<usize>> {
            lists
                .iter()
                .map(|lits| lits.iter().map(|l| intern(literals, l)).collect())
                .collect()
        }
        let mut literals: Vec<&str> = Vec::new();
        let needs = index(&mut literals, rule_literals);
        let inside_matches = index(&mut literals, inside_matches);
        let automaton = (!literals.is_empty())
            .then(|| AhoCorasick::new(&literals).expect("plain literals always build"));
        Self {
            automaton,
            literals: literals.iter().map(|l| l.to_string()).collect(),
            needs,
            inside_matches,
        }
    }

    /// Where the literals occur in `text`: one scan serves every question below.
    pub fn scan(&self, text: &str) -> Hits {
        Hits(self.automaton.as_ref().map_or_else(Vec::new, |a| {
            a.find_overlapping_iter(text)
                .map(|m| (m.pattern().as_usize(), m.start()))
                .collect()
        }))
    }

    /// The byte offsets in `text` of the anchors of `rules`, sorted (see [`Prefilter::anchors`]);
    /// `known` is the scan of `text` where one was made already.
    pub fn anchor_offsets(
        &self,
        text: &str,
        known: Option<&Hits>,
        rules: &[usize],
    ) -> Option<Vec<usize>> {
        if rules.iter().any(|&r| self.inside_matches[r].is_empty()) {
            return None;
        }
        let scanned;
        let hits = match known {
            Some(hits) => hits,
            None => {
                scanned = self.scan(text);
                &scanned
            }
        };
        let mut offsets: Vec<usize> = self
            .anchors(hits, rules)?
            .into_iter()
            .flat_map(|a| a.offsets)
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        Some(offsets)
    }

    /// For each of `rules`, in order, its anchor in the scanned text: every occurrence of
    /// whichever of its in-match literals occurs least often there (a rule with one absent has
    /// no match, and no occurrence), with the others, which a match's line must hold too.
    /// `None` when a rule has no such literal (its matches could be anywhere).
    pub fn anchors(&self, hits: &Hits, rules: &[usize]) -> Option<Vec<Anchor<'_>>> {
        if rules.iter().any(|&r| self.inside_matches[r].is_empty()) {
            return None;
        }
        // The offsets of each literal, gathered in one pass: filtering every hit per rule
        // cost rules × hits, which dominated packs of hundreds of rules.
        let mut at: Vec<Vec<usize>> = vec![Vec::new(); self.literals.len()];
        for &(literal, start) in &hits.0 {
            at[literal].push(start);
        }
        Some(
            rules
                .iter()
                .map(|&r| {
                    let inside = &self.inside_matches[r];
                    let rarest = *inside
                        .iter()
                        .min_by_key(|&&l| at[l].len())
                        .expect("checked non-empty above");
                    Anchor {
                        offsets: at[rarest].clone(),
                        also: inside
                            .iter()
                            .filter(|&&l| l != rarest)
                            .map(|&l| self.literals[l].as_str())
                            .collect(),
                        assignment: None,
                    }
                })
                .collect(),
        )
    }

    /// For each rule, whether the scanned text holds all of its literals.
    pub fn possible(&self, hits: &Hits) -> Vec<bool> {
        let mut present = vec![false; self.literals.len()];
        for &(literal, _) in &hits.0 {
            present[literal] = true;
        }
        self.needs
            .iter()
            .map(|need| need.iter().all(|&i| present[i]))
            .collect()
    }
}

/// Every occurrence of every literal in one text, as (literal, byte offset), in order.
#[derive(Debug, Clone, Default)]
pub struct Hits(Vec<(usize, usize)>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_needs_all_of_its_literals() {
        let p = Prefilter::new(
            &[
                vec!["decoder_layer".into()],
                vec!["WhisperDecoder".into(), "layers".into()],
                vec![],
            ],
            &[vec![], vec![], vec![]],
        );
        assert_eq!(
            p.possible(&p.scan("x = decoder_layer(h)")),
            [true, false, true]
        );
        assert_eq!(
            p.possible(&p.scan("class WhisperDecoder: self.layers")),
            [false, true, true]
        );
    }

    #[test]
    fn each_rule_is_anchored_on_its_rarest_literal_in_the_file() {
        let p = Prefilter::new(
            &[
                vec!["decoder_layer".into()],
                vec!["self".into(), "mlp".into()],
                vec![],
            ],
            &[
                vec!["decoder_layer".into()],
                vec!["self".into(), "mlp".into()],
                vec![],
            ],
        );
        let text = "x = self.mlp(h)\ny = decoder_layer(x)\nz = self.norm(y)\n";
        assert_eq!(p.anchor_offsets(text, None, &[0]), Some(vec![20]));
        // `mlp` occurs once, `self` twice.
        assert_eq!(p.anchor_offsets(text, None, &[0, 1]), Some(vec![9, 20]));
        let text = "x = self.mlp(h)\ny = mlp(self)\nz = mlp(mlp)\n";
        assert_eq!(p.anchor_offsets(text, None, &[1]), Some(vec![4, 24]));
        assert_eq!(p.anchor_offsets(text, None, &[0, 2]), None);
    }
}
