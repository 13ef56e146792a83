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

use std::collections::HashMap;
use std::ops::Range;

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::nfa::contiguous;
use aho_corasick::{Anchored, MatchKind, Span};

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

/// Up to how many bytes of literals the automaton is a DFA: its table grows with the number
/// of states times the byte classes, an NFA's only with the states.
const DFA_LITERAL_BYTES: usize = 16 * 1024;

/// Up to how long its longest literal may be: building a DFA for a long run of one byte
/// (`"qqq…"`) is quadratic in the run (5 s for one of 16,000 bytes, 0.1 s for 128 runs of
/// 128), and real names reach 80 bytes (`_prepare_4d_causal_attention_mask_with_…`).
const DFA_LITERAL_LEN: usize = 128;

/// The literals' automaton, searched by [`Prefilter::scan_within`]'s own loop: every
/// occurrence of every literal is wanted, and through `find_overlapping_iter` each one cost a
/// return from and re-entry into the search (a pack's short names and `self` occur a million
/// times in a release).
#[derive(Debug)]
enum Literals {
    /// The fastest search, for a few literals.
    Dfa(DFA),
    /// Linear in the literals' size, for many.
    Nfa(contiguous::NFA),
    /// Past `NFA_CHUNK` literals, one NFA per chunk of them (with its first literal's index),
    /// and each literal's length. The library's NFA builder moves match states with a chain of
    /// swaps whose remapping is quadratic in the literals (10,000 rules: 0.8 G instructions,
    /// 40,000: 8 s); chunks keep building linear, at one scan per chunk.
    Chunks(Vec<(contiguous::NFA, usize)>, Vec<usize>),
}

/// How many literals one NFA holds before the set is split (see `Literals::Chunks`).
const NFA_CHUNK: usize = 2048;

impl Literals {
    fn new(literals: &[&str]) -> Self {
        let bytes: usize = literals.iter().map(|l| l.len()).sum();
        let longest = literals.iter().map(|l| l.len()).max().unwrap_or(0);
        if bytes <= DFA_LITERAL_BYTES
            && longest <= DFA_LITERAL_LEN
            && let Ok(dfa) = DFA::builder()
                .match_kind(MatchKind::Standard)
                .build(literals)
        {
            return Literals::Dfa(dfa);
        }
        // An NFA fails to build only past 2^31 states: gigabytes of literals, far beyond
        // what the rule files' size cap lets a rule set hold.
        let nfa = |literals: &[&str]| {
            contiguous::NFA::builder()
                .match_kind(MatchKind::Standard)
                .build(literals)
                .expect("plain literals of a loadable rule set always build")
        };
        if literals.len() <= NFA_CHUNK {
            return Literals::Nfa(nfa(literals));
        }
        let chunks = literals
            .chunks(NFA_CHUNK)
            .enumerate()
            .map(|(i, chunk)| (nfa(chunk), i * NFA_CHUNK))
            .collect();
        Literals::Chunks(chunks, literals.iter().map(|l| l.len()).collect())
    }

    /// Appends every occurrence within `range` of `text`, in order of its end.
    fn scan(&self, text: &[u8], range: Range<usize>, hits: &mut Vec<(usize, usize)>) {
        match self {
            Literals::Dfa(a) => scan_with(a, text, range, hits),
            Literals::Nfa(a) => scan_with(a, text, range, hits),
            Literals::Chunks(chunks, lengths) => {
                let first = hits.len();
                for (nfa, offset) in chunks {
                    let from = hits.len();
                    scan_with(nfa, text, range.clone(), hits);
                    for hit in &mut hits[from..] {
                        hit.0 += offset;
                    }
                }
                // One list in order of end, then literal, as one automaton gives it.
                hits[first..].sort_unstable_by_key(|&(l, start)| (start + lengths[l], l));
            }
        }
    }
}

/// Every occurrence of the literals of `automaton` within `range` of `text`, as (literal,
/// start), in order of its end (and of the literal's index at one end). As the library's own
/// overlapping search: from the start state (no match under way), the automaton's prefilter,
/// where it has one (a few rare literals), jumps to the next place a literal could start.
fn scan_with<A: Automaton>(
    automaton: &A,
    text: &[u8],
    range: Range<usize>,
    hits: &mut Vec<(usize, usize)>,
) {
    let prefilter = automaton.prefilter();
    let mut state = automaton
        .start_state(Anchored::No)
        .expect("an unanchored search has a start state");
    let mut at = range.start;
    if let Some(prefilter) = prefilter {
        match prefilter
            .find_in(text, Span::from(at..range.end))
            .into_option()
        {
            None => return,
            Some(next) => at = next,
        }
    }
    while at < range.end {
        state = automaton.next_state(Anchored::No, state, text[at]);
        at += 1;
        // Standard semantics never reach a dead state, and no literal is empty: special means
        // a match, or the start (special only where there is a prefilter).
        if automaton.is_special(state) {
            if automaton.is_match(state) {
                for i in 0..automaton.match_len(state) {
                    let literal = automaton.match_pattern(state, i);
                    hits.push((literal.as_usize(), at - automaton.pattern_len(literal)));
                }
            } else if let Some(prefilter) = prefilter {
                match prefilter
                    .find_in(text, Span::from(at..range.end))
                    .into_option()
                {
                    None => return,
                    Some(next) => at = next,
                }
            }
        }
    }
}

/// What a rule needs a text to hold: each clause, one of its literals (most clauses are one
/// literal; a `where` regex's alternation, `^(q_proj|k_proj)$`, is a clause of several).
pub type Clauses = Vec<Vec<String>>;

/// The literals of every rule, compiled into one automaton.
#[derive(Debug)]
pub struct Prefilter {
    automaton: Option<Literals>,
    literals: Vec<String>,
    /// For each rule, the clauses (indexes of literals, one of which must occur) it needs.
    needs: Vec<Vec<Vec<usize>>>,
    /// For each rule, the clauses every match satisfies within its own text (its pattern's
    /// literals, and those its `where` regexes require of what the pattern binds).
    inside_matches: Vec<Vec<Vec<usize>>>,
    /// For each rule, the clauses the top-level statement of every match satisfies (its
    /// pattern's, or else those of what an enclosing scope must hold).
    in_statements: Vec<Vec<Vec<usize>>>,
}

impl Prefilter {
    /// Builds the prefilter from each rule's required clauses and, among them, those that hold
    /// inside every match of the rule and those in every match's top-level statement.
    pub fn new(needs: &[Clauses], inside_matches: &[Clauses], in_statements: &[Clauses]) -> Self {
        /// Each distinct literal's index in `literals` (a search of the list per literal was
        /// quadratic in a pack of thousands of rules).
        #[derive(Default)]
        struct Interner<'a> {
            literals: Vec<&'a str>,
            index: HashMap<&'a str, usize>,
        }
        impl<'a> Interner<'a> {
            /// An empty literal is in every text: a clause holding one says nothing, and is
            /// left out (so the automaton's start state matches nothing).
            fn lists(&mut self, lists: &'a [Clauses]) -> Vec<Vec<Vec<usize>>> {
                lists
                    .iter()
                    .map(|clauses| {
                        clauses
                            .iter()
                            .filter(|c| !c.is_empty() && c.iter().all(|l| !l.is_empty()))
                            .map(|c| c.iter().map(|l| self.intern(l)).collect())
                            .collect()
                    })
                    .collect()
            }
            fn intern(&mut self, l: &'a str) -> usize {
                *self.index.entry(l).or_insert_with(|| {
                    self.literals.push(l);
                    self.literals.len() - 1
                })
            }
        }
        let mut interner = Interner::default();
        let needs = interner.lists(needs);
        let inside_matches = interner.lists(inside_matches);
        let in_statements = interner.lists(in_statements);
        let literals = interner.literals;
        let automaton = (!literals.is_empty()).then(|| Literals::new(&literals));
        Self {
            automaton,
            literals: literals.iter().map(|l| l.to_string()).collect(),
            needs,
            inside_matches,
            in_statements,
        }
    }

    /// Where the literals occur in `text`: one scan serves every question below.
    pub fn scan(&self, text: &str) -> Hits {
        self.scan_within(text, std::iter::once(0..text.len()))
    }

    /// Where the literals occur within `ranges` of `text` (in order): all a search needs where
    /// only those ranges were parsed, since every match holds its literals.
    pub fn scan_within(&self, text: &str, ranges: impl IntoIterator<Item = Range<usize>>) -> Hits {
        let Some(automaton) = &self.automaton else {
            return Hits::default();
        };
        let mut hits = Vec::new();
        for range in ranges {
            automaton.scan(text.as_bytes(), range, &mut hits);
        }
        Hits(hits)
    }

    /// Whether `rule` has a clause every match satisfies, to anchor it by.
    pub fn is_anchored(&self, rule: usize) -> bool {
        !self.inside_matches[rule].is_empty()
    }

    /// The byte offsets of the anchors of `rules` in the scanned text, sorted (see
    /// [`Prefilter::anchors`]).
    pub fn anchor_offsets(&self, hits: &Hits, rules: &[usize]) -> Option<Vec<usize>> {
        let mut offsets: Vec<usize> = self
            .anchors(hits, rules)?
            .into_iter()
            .flat_map(|a| a.offsets)
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        Some(offsets)
    }

    /// For each of `rules`, in order, its anchor in the scanned text: every occurrence of the
    /// literals of whichever of its in-match clauses occurs least often there (a rule with one
    /// absent has no match, and no occurrence), with the other one-literal clauses, which a
    /// match's line must hold too. `None` when a rule has no such clause (its matches could be
    /// anywhere).
    pub fn anchors(&self, hits: &Hits, rules: &[usize]) -> Option<Vec<Anchor<'_>>> {
        self.anchors_among(hits, rules, &self.inside_matches)
    }

    /// As [`Prefilter::anchors`], of the clauses each rule's matches' top-level statements
    /// satisfy: where those statements are.
    pub fn statement_anchors(&self, hits: &Hits, rules: &[usize]) -> Option<Vec<Anchor<'_>>> {
        self.anchors_among(hits, rules, &self.in_statements)
    }

    fn anchors_among(
        &self,
        hits: &Hits,
        rules: &[usize],
        lists: &[Vec<Vec<usize>>],
    ) -> Option<Vec<Anchor<'_>>> {
        if rules.iter().any(|&r| lists[r].is_empty()) {
            return None;
        }
        // The offsets of each literal, gathered in one pass: filtering every hit per rule
        // cost rules × hits, which dominated packs of hundreds of rules.
        let mut at: Vec<Vec<usize>> = vec![Vec::new(); self.literals.len()];
        for &(literal, start) in &hits.0 {
            at[literal].push(start);
        }
        let count = |clause: &[usize]| clause.iter().map(|&l| at[l].len()).sum::<usize>();
        Some(
            rules
                .iter()
                .map(|&r| {
                    let clauses = &lists[r];
                    let rarest = clauses
                        .iter()
                        .min_by_key(|c| count(c))
                        .expect("checked non-empty above");
                    let mut offsets: Vec<usize> =
                        rarest.iter().flat_map(|&l| at[l].iter().copied()).collect();
                    if rarest.len() > 1 {
                        offsets.sort_unstable();
                        offsets.dedup();
                    }
                    Anchor {
                        offsets,
                        // A line must hold each one-literal clause; a clause of several is
                        // left to the matcher (the line check is only a narrowing).
                        also: clauses
                            .iter()
                            .filter(|c| !std::ptr::eq(*c, rarest) && c.len() == 1)
                            .map(|c| self.literals[c[0]].as_str())
                            .collect(),
                        assignment: None,
                    }
                })
                .collect(),
        )
    }

    /// For each rule, whether the scanned text satisfies all of its clauses.
    pub fn possible(&self, hits: &Hits) -> Vec<bool> {
        let mut present = vec![false; self.literals.len()];
        for &(literal, _) in &hits.0 {
            present[literal] = true;
        }
        self.needs
            .iter()
            .map(|need| need.iter().all(|c| c.iter().any(|&i| present[i])))
            .collect()
    }
}

/// Every occurrence of every literal in one text, as (literal, byte offset), in order.
#[derive(Debug, Clone, Default)]
pub struct Hits(Vec<(usize, usize)>);

#[cfg(test)]
mod tests {
    use super::*;

    /// Clauses of one literal each: what every rule needed before `where` regexes counted.
    fn ones(literals: Vec<String>) -> Clauses {
        literals.into_iter().map(|l| vec![l]).collect()
    }

    #[test]
    fn a_rule_needs_all_of_its_literals() {
        let p = Prefilter::new(
            &[
                ones(vec!["decoder_layer".into()]),
                ones(vec!["WhisperDecoder".into(), "layers".into()]),
                ones(vec![]),
            ],
            &[ones(vec![]), ones(vec![]), ones(vec![])],
            &[ones(vec![]), ones(vec![]), ones(vec![])],
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
                ones(vec!["decoder_layer".into()]),
                ones(vec!["self".into(), "mlp".into()]),
                ones(vec![]),
            ],
            &[
                ones(vec!["decoder_layer".into()]),
                ones(vec!["self".into(), "mlp".into()]),
                ones(vec![]),
            ],
            &[ones(vec![]), ones(vec![]), ones(vec![])],
        );
        let text = "x = self.mlp(h)\ny = decoder_layer(x)\nz = self.norm(y)\n";
        assert_eq!(p.anchor_offsets(&p.scan(text), &[0]), Some(vec![20]));
        // `mlp` occurs once, `self` twice.
        assert_eq!(p.anchor_offsets(&p.scan(text), &[0, 1]), Some(vec![9, 20]));
        let text = "x = self.mlp(h)\ny = mlp(self)\nz = mlp(mlp)\n";
        assert_eq!(p.anchor_offsets(&p.scan(text), &[1]), Some(vec![4, 24]));
        assert_eq!(p.anchor_offsets(&p.scan(text), &[0, 2]), None);
    }

    #[test]
    fn every_occurrence_is_found_overlapping_and_within_ranges_only() {
        // With a literal long enough that the automaton is an NFA, and without.
        for long in ["zz".to_string(), "z".repeat(DFA_LITERAL_LEN + 1)] {
            let p = Prefilter::new(
                &[ones(vec![
                    "norm".into(),
                    "layer_norm".into(),
                    "aa".into(),
                    long,
                ])],
                &[ones(vec![])],
                &[ones(vec![])],
            );
            let text = "x = layer_norm(aaa)\ny = norm(x)\n";
            let mut hits = p.scan(text).0;
            hits.sort_unstable();
            // `norm` inside `layer_norm` too, and `aa` twice in `aaa`.
            assert_eq!(hits, [(0, 10), (0, 24), (1, 4), (2, 15), (2, 16)]);
            let line2 = text.find("\ny").unwrap() + 1..text.len();
            assert_eq!(p.scan_within(text, [line2]).0, [(0, 24)]);
        }
    }

    #[test]
    fn the_scan_reports_what_the_librarys_overlapping_search_does() {
        let long = "q".repeat(DFA_LITERAL_LEN + 1);
        // One rare literal: the automaton's prefilter skips ahead between occurrences.
        let sets: [&[&str]; 5] = [
            &["decoder_layer"],
            &["a", "ab", "bab", "b"],
            &["s", "self", "elf"],
            &["norm", "layer_norm", "norm_out", long.as_str()],
            &["\u{e9}t\u{e9}", "t"],
        ];
        let texts = [
            "",
            "abababab",
            "self.self_attn(x) ; elf",
            "x = layer_norm_out(norm)",
            "\u{e9}t\u{e9} t",
            "out = decoder_layer(h)\n# decoder_layers\ndecoder_layerdecoder_layer",
        ];
        for literals in sets {
            let owned: Vec<String> = literals.iter().map(|l| l.to_string()).collect();
            let p = Prefilter::new(&[ones(owned)], &[ones(vec![])], &[ones(vec![])]);
            let library = aho_corasick::AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(literals)
                .unwrap();
            for text in texts {
                let expected: Vec<(usize, usize)> = library
                    .find_overlapping_iter(text)
                    .map(|m| (m.pattern().as_usize(), m.start()))
                    .collect();
                assert_eq!(p.scan(text).0, expected, "{literals:?} in {text:?}");
            }
        }
    }

    #[test]
    fn chunked_automata_report_what_one_automaton_does() {
        // More literals than one NFA holds: overlapping ones across chunks (`f1`, `f12`,
        // `f123`, `12`), each found once, in order of end then literal.
        let literals: Vec<String> = (0..NFA_CHUNK * 2 + 10)
            .map(|i| format!("f{i}"))
            .chain(["12".to_string(), "2".repeat(DFA_LITERAL_LEN + 1)])
            .collect();
        let p = Prefilter::new(&[ones(literals.clone())], &[ones(vec![])], &[ones(vec![])]);
        assert!(matches!(p.automaton, Some(Literals::Chunks(..))));
        let library = aho_corasick::AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(&literals)
            .unwrap();
        let text = "x = f123(f4095) + f12 + f4100\nf0 f2057";
        let expected: Vec<(usize, usize)> = library
            .find_overlapping_iter(text)
            .map(|m| (m.pattern().as_usize(), m.start()))
            .collect();
        assert!(expected.len() > 10);
        assert_eq!(p.scan(text).0, expected);
    }

    #[test]
    fn a_clause_needs_one_of_its_literals_and_anchors_on_all_of_them() {
        let clause = vec![vec!["q_proj".to_string(), "k_proj".to_string()]];
        let p = Prefilter::new(
            std::slice::from_ref(&clause),
            std::slice::from_ref(&clause),
            &[vec![]],
        );
        assert_eq!(p.possible(&p.scan("x = self.k_proj(h)")), [true]);
        assert_eq!(p.possible(&p.scan("x = self.v_proj(h)")), [false]);
        let text = "a = self.k_proj(h)\nb = self.q_proj(h)\nc = self.k_proj(b)\n";
        assert_eq!(p.anchor_offsets(&p.scan(text), &[0]), Some(vec![9, 28, 47]));
        // A clause of one literal beside it is what the line must hold too; the rarest clause
        // is the anchor (`self` three times, the pair three times: the first written wins).
        let clauses = vec![vec!["h".to_string()], clause[0].clone()];
        let p = Prefilter::new(
            std::slice::from_ref(&clauses),
            std::slice::from_ref(&clauses),
            &[vec![]],
        );
        let anchors = p.anchors(&p.scan("x = self.q_proj(h)\n"), &[0]).unwrap();
        assert_eq!(
            (anchors[0].offsets.clone(), anchors[0].also.clone()),
            (vec![16], vec![])
        );
        let anchors = p
            .anchors(&p.scan("x = self.q_proj(h)\nh = h + h\n"), &[0])
            .unwrap();
        assert_eq!(
            (anchors[0].offsets.clone(), anchors[0].also.clone()),
            (vec![9], vec!["h"])
        );
    }

    #[test]
    fn an_empty_literal_says_nothing() {
        let p = Prefilter::new(
            &[ones(vec!["".into(), "x".into()])],
            &[ones(vec!["".into()])],
            &[ones(vec![])],
        );
        assert_eq!(p.possible(&p.scan("x")), [true]);
        assert_eq!(p.possible(&p.scan("y")), [false]);
        // Nothing to anchor the rule by: its matches could be anywhere.
        assert!(!p.is_anchored(0));
    }
}
