//! The literal prefilter: which rules could match a file, decided from its bytes alone.
//!
//! Every match of a rule contains the identifiers and string parts its pattern spells out, and
//! lies in a file that contains the names of the scopes it asks for. One Aho-Corasick scan of a
//! file finds which of all rules' literals occur; a rule whose literals do not all occur cannot
//! match, and a file where no rule can match is not parsed at all.
//!
//! A rule's pattern literals also lie inside each of its matches, so the longest of them is the
//! rule's anchor: where a file is parsed, the candidate query runs only over the top-level
//! statements that hold an anchor of every rule it looks for.

use aho_corasick::AhoCorasick;

/// The literals of every rule, compiled into one automaton.
#[derive(Debug)]
pub struct Prefilter {
    automaton: Option<AhoCorasick>,
    literal_count: usize,
    /// For each rule, the indexes of the literals it needs.
    needs: Vec<Vec<usize>>,
    /// For each rule, the index of a literal every match contains, if its pattern has one.
    anchors: Vec<Option<usize>>,
}

impl Prefilter {
    /// Builds the prefilter from each rule's required literals and, where it has one, the
    /// literal inside every match of the rule (which must be among its required literals).
    pub fn new(rule_literals: &[Vec<String>], anchors: &[Option<String>]) -> Self {
        fn intern<'a>(literals: &mut Vec<&'a str>, l: &'a str) -> usize {
            literals.iter().position(|x| *x == l).unwrap_or_else(|| {
                literals.push(l);
                literals.len() - 1
            })
        }
        let mut literals: Vec<&str> = Vec::new();
        let needs = rule_literals
            .iter()
            .map(|lits| lits.iter().map(|l| intern(&mut literals, l)).collect())
            .collect();
        let anchors = anchors
            .iter()
            .map(|a| a.as_deref().map(|l| intern(&mut literals, l)))
            .collect();
        let automaton = (!literals.is_empty())
            .then(|| AhoCorasick::new(&literals).expect("plain literals always build"));
        Self {
            automaton,
            literal_count: literals.len(),
            needs,
            anchors,
        }
    }

    /// The byte offsets in `text` of the anchors of `rules`, sorted; `None` when one of them
    /// has no anchor (its matches could be anywhere).
    pub fn anchor_offsets(&self, text: &str, rules: &[usize]) -> Option<Vec<usize>> {
        let wanted: Vec<usize> = rules
            .iter()
            .map(|&r| self.anchors[r])
            .collect::<Option<_>>()?;
        let Some(automaton) = &self.automaton else {
            return Some(Vec::new());
        };
        Some(
            automaton
                .find_overlapping_iter(text)
                .filter(|m| wanted.contains(&m.pattern().as_usize()))
                .map(|m| m.start())
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
            &[None, None, None],
        );
        assert_eq!(p.possible("x = decoder_layer(h)"), [true, false, true]);
        assert_eq!(
            p.possible("class WhisperDecoder: self.layers"),
            [false, true, true]
        );
    }

    #[test]
    fn anchors_are_found_where_every_rule_has_one() {
        let p = Prefilter::new(
            &[
                vec!["decoder_layer".into()],
                vec!["self".into(), "mlp".into()],
                vec![],
            ],
            &[Some("decoder_layer".into()), Some("mlp".into()), None],
        );
        let text = "x = self.mlp(h)\ny = decoder_layer(x)\n";
        assert_eq!(p.anchor_offsets(text, &[0]), Some(vec![20]));
        assert_eq!(p.anchor_offsets(text, &[0, 1]), Some(vec![9, 20]));
        assert_eq!(p.anchor_offsets(text, &[0, 2]), None);
    }
}
