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

/// The literals of every rule, compiled into one automaton.
#[derive(Debug)]
pub struct Prefilter {
    automaton: Option<AhoCorasick>,
    literal_count: usize,
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
            literal_count: literals.len(),
            needs,
            inside_matches,
        }
    }

    /// The byte offsets in `text` of the anchors of `rules`, sorted: for each rule, every
    /// occurrence of whichever of its in-match literals occurs least often here (a rule with
    /// one absent has no match, and no anchor). `None` when a rule has no such literal (its
    /// matches could be anywhere).
    pub fn anchor_offsets(&self, text: &str, rules: &[usize]) -> Option<Vec<usize>> {
        if rules.iter().any(|&r| self.inside_matches[r].is_empty()) {
            return None;
        }
        let Some(automaton) = &self.automaton else {
            return Some(Vec::new());
        };
        let hits: Vec<(usize, usize)> = automaton
            .find_overlapping_iter(text)
            .map(|m| (m.pattern().as_usize(), m.start()))
            .collect();
        let mut counts = vec![0usize; self.literal_count];
        for &(literal, _) in &hits {
            counts[literal] += 1;
        }
        let mut anchor = vec![false; self.literal_count];
        for &r in rules {
            let rarest = self.inside_matches[r]
                .iter()
                .copied()
                .min_by_key(|&l| counts[l])
                .expect("checked non-empty above");
            anchor[rarest] = true;
        }
        Some(
            hits.into_iter()
                .filter(|&(literal, _)| anchor[literal])
                .map(|(_, start)| start)
                .collect(),
        )
    }

    /// For each rule, whether `text` holds all of its literals.
    pub fn possible(&self, text: &str) -> Vec<bool> {
        let mut present = vec![false; self.literal_count];
        if let Some(automaton) = &self.automaton {
            for m in automaton.find_overlapping_iter(text) {
                present[m.pattern().as_usize()] = true;
            }
        }
        self.needs
            .iter()
            .map(|need| need.iter().all(|&i| present[i]))
            .collect()
    }
}

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
        assert_eq!(p.possible("x = decoder_layer(h)"), [true, false, true]);
        assert_eq!(
            p.possible("class WhisperDecoder: self.layers"),
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
        assert_eq!(p.anchor_offsets(text, &[0]), Some(vec![20]));
        // `mlp` occurs once, `self` twice.
        assert_eq!(p.anchor_offsets(text, &[0, 1]), Some(vec![9, 20]));
        let text = "x = self.mlp(h)\ny = mlp(self)\nz = mlp(mlp)\n";
        assert_eq!(p.anchor_offsets(text, &[1]), Some(vec![4, 24]));
        assert_eq!(p.anchor_offsets(text, &[0, 2]), None);
    }
}
