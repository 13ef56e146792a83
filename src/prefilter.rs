//! The literal prefilter: which rules could match a file, decided from its bytes alone.
//!
//! Every match of a rule contains the identifiers and string parts its pattern spells out, and
//! lies in a file that contains the names of the scopes it asks for. One Aho-Corasick scan of a
//! file finds which of all rules' literals occur; a rule whose literals do not all occur cannot
//! match, and a file where no rule can match is not parsed at all.

use aho_corasick::AhoCorasick;

/// The literals of every rule, compiled into one automaton.
#[derive(Debug)]
pub struct Prefilter {
    automaton: Option<AhoCorasick>,
    literal_count: usize,
    /// For each rule, the indexes of the literals it needs.
    needs: Vec<Vec<usize>>,
}

impl Prefilter {
    /// Builds the prefilter from each rule's required literals.
    pub fn new(rule_literals: &[Vec<String>]) -> Self {
        let mut literals: Vec<&str> = Vec::new();
        let needs = rule_literals
            .iter()
            .map(|lits| {
                lits.iter()
                    .map(|l| match literals.iter().position(|x| *x == l) {
                        Some(i) => i,
                        None => {
                            literals.push(l);
                            literals.len() - 1
                        }
                    })
                    .collect()
            })
            .collect();
        let automaton = (!literals.is_empty())
            .then(|| AhoCorasick::new(&literals).expect("plain literals always build"));
        Self {
            automaton,
            literal_count: literals.len(),
            needs,
        }
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
        let p = Prefilter::new(&[
            vec!["decoder_layer".into()],
            vec!["WhisperDecoder".into(), "layers".into()],
            vec![],
        ]);
        assert_eq!(p.possible("x = decoder_layer(h)"), [true, false, true]);
        assert_eq!(
            p.possible("class WhisperDecoder: self.layers"),
            [false, true, true]
        );
    }
}
