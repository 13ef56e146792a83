//! Finding a rule's matches in a parsed file: candidates by kind walk or query, then the exact
//! matcher with the bindings its scopes seed, then the guards.

use std::collections::HashSet;
use std::ops::Range;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, QueryCursor};

use super::applied::{applied_sites, cleared_scopes};
pub(crate) use super::found::Found;
use super::{Engine, scope};
use crate::compile::{Applied, CompiledRule, RuleId};
use crate::pattern::matcher::{Bindings, Matcher};
use crate::pattern::query::ROOT_CAPTURE;
use crate::prefilter::Hits;
use crate::rules::model::Per;

/// Above this many rules in a step, candidates come from anchor ancestors, not the shared query.
const ANCHOR_WALK_ABOVE: usize = 4;

impl Engine<'_> {
    /// Every match of each of `active` (sorted), in document order.
    /// `hits` is the literal scan of `text`, where the caller has one; `regions`, the ranges
    /// the tree of `root` holds where only some were parsed.
    pub(crate) fn find<'t>(
        &self,
        text: &str,
        hits: Option<&Hits>,
        regions: Option<&[Range<usize>]>,
        root: Node<'t>,
        active: &[RuleId],
    ) -> Vec<Vec<Found<'t>>> {
        let candidates = self.candidates(text, hits, regions, root, active);
        let matcher = Matcher::new(text);
        let cache = scope::ScopeCache::default();
        candidates
            .into_iter()
            .zip(active)
            .map(|(mut nodes, &id)| {
                let rule = self.rules.rule(id);
                nodes.sort_by_key(|n| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
                let mut found: Vec<Found<'t>> = nodes
                    .into_iter()
                    .filter_map(|node| match_at(rule, root, node, text, &matcher, &cache))
                    .collect();
                if matches!(rule.pattern.root, crate::pattern::PatNode::Any(_)) {
                    drop_inner_alternatives(&mut found);
                }
                // Too few sites of the pattern: sites of the shape the action leaves are this
                // patch already in place (`--write`, then `--check`), and count as such.
                let wanted = rule.rule.expect.map_or(0, |e| e.min) as usize;
                match &rule.applied {
                    Some(Applied::Shape(applied)) if found.len() < wanted => {
                        found.extend(applied_sites(rule, applied, root, text, &matcher, &cache));
                    }
                    Some(Applied::Absence) if found.is_empty() && wanted > 0 => {
                        found.extend(cleared_scopes(rule, root, text, &matcher, &cache));
                    }
                    _ => {}
                }
                found
            })
            .collect()
    }
}

/// One site, one alternative: where alternatives match at the same place, the outer node's
/// (a statement run found at its first statement) wins over one found within it (an expression
/// of that statement), as the first alternative that matches a site wins. `found` is in
/// document order, outer nodes first.
fn drop_inner_alternatives(found: &mut Vec<Found<'_>>) {
    let mut kept: Vec<Found<'_>> = Vec::with_capacity(found.len());
    for m in found.drain(..) {
        let within = kept.last().is_some_and(|k| {
            k.node.start_byte() == m.node.start_byte() && m.last.end_byte() <= k.last.end_byte()
        });
        if !within {
            kept.push(m);
        }
    }
    *found = kept;
}

impl Engine<'_> {
    /// Where the candidate query runs: the top-level statements holding an anchor literal of
    /// the active rules, merged; `None` when a rule has no anchor (its matches could be
    /// anywhere). Walking only those statements finds every match, since each match contains
    /// its rule's anchor.
    fn anchored_ranges(
        &self,
        hits: &Hits,
        root: Node<'_>,
        indexes: &[usize],
    ) -> Option<Vec<Range<usize>>> {
        let offsets = self.rules.prefilter.anchor_offsets(hits, indexes)?;
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for offset in offsets {
            if ranges.last().is_some_and(|r| r.contains(&offset)) {
                continue;
            }
            let Some(statement) = root.first_child_for_byte(offset) else {
                continue;
            };
            let range = statement.byte_range();
            match ranges.last_mut() {
                Some(last) if last.end >= range.start => last.end = last.end.max(range.end),
                _ => ranges.push(range),
            }
        }
        Some(ranges)
    }

    /// The candidates of the active rules (by slot in `active`): the query's matches where it
    /// runs over a few anchored statements (or everywhere, with the prefilter off), else one walk
    /// of the whole tree over node kinds. Both yield every node a rule's pattern could match;
    /// the exact matcher decides.
    fn candidates<'t>(
        &self,
        text: &str,
        hits: Option<&Hits>,
        regions: Option<&[Range<usize>]>,
        root: Node<'t>,
        active: &[RuleId],
    ) -> Vec<Vec<Node<'t>>> {
        if !self.prefilter {
            return self.query_candidates(text, root, active, std::iter::once(0..text.len()));
        }
        // Rules with no anchor are found by one walk of the tree; the rest by their anchors,
        // whatever the others need (one unanchored rule once made a pack of 150 walk and
        // match every assignment of the file for each of its rules).
        let (anchored, loose): (Vec<RuleId>, Vec<RuleId>) = active
            .iter()
            .partition(|id| self.rules.prefilter.is_anchored(id.0));
        if anchored.is_empty() {
            return self.walk_candidates(root, active);
        }
        let mut out = vec![Vec::new(); active.len()];
        let mut place = |ids: &[RuleId], found: Vec<Vec<Node<'t>>>| {
            for (id, nodes) in ids.iter().zip(found) {
                let slot = active
                    .binary_search(id)
                    .expect("a subset of the active rules");
                out[slot] = nodes;
            }
        };
        if !loose.is_empty() {
            place(&loose, self.walk_candidates(root, &loose));
        }
        place(
            &anchored,
            self.anchored_candidates(text, hits, regions, root, &anchored),
        );
        out
    }

    /// The candidates of `active`, every one of which has an anchor (see `candidates`).
    fn anchored_candidates<'t>(
        &self,
        text: &str,
        hits: Option<&Hits>,
        regions: Option<&[Range<usize>]>,
        root: Node<'t>,
        active: &[RuleId],
    ) -> Vec<Vec<Node<'t>>> {
        let indexes: Vec<usize> = active.iter().map(|id| id.0).collect();
        // A tree of some regions holds matches only there, and every match holds its literals:
        // the rest of the text need not be scanned (the check of a patch's fixed point runs
        // on the edited regions of the whole patched text).
        let scanned;
        let hits = match (hits, regions) {
            (Some(hits), _) => hits,
            (None, Some(regions)) => {
                scanned = self
                    .rules
                    .prefilter
                    .scan_within(text, regions.iter().cloned());
                &scanned
            }
            (None, None) => {
                scanned = self.rules.prefilter.scan(text);
                &scanned
            }
        };
        // Many rules at once: one query holding all their patterns starts a state per pattern
        // at every node of a shared root kind, and costs more than the parse. Each rule's
        // matches contain its anchor, so they are among the anchor's ancestors.
        if active.len() > ANCHOR_WALK_ABOVE
            && let Some(found) = self.anchor_candidates(hits, root, active, &indexes)
        {
            return found;
        }
        match self.anchored_ranges(hits, root, &indexes) {
            Some(ranges) => self.query_candidates(text, root, active, ranges),
            None => self.walk_candidates(root, active),
        }
    }

    /// Each rule's candidates as the anchor occurrences' ancestors (and themselves) of a kind
    /// the rule's pattern may be rooted at; `None` where a rule has no anchor. A statement
    /// sequence is anchored on a literal of its first statement, where it is found.
    fn anchor_candidates<'t>(
        &self,
        hits: &Hits,
        root: Node<'t>,
        active: &[RuleId],
        indexes: &[usize],
    ) -> Option<Vec<Vec<Node<'t>>>> {
        let anchors = self.rules.prefilter.anchors(hits, indexes)?;
        let rooted = |node: Node<'_>, rule: usize| {
            self.rules
                .by_root_kind
                .get(usize::from(node.kind_id()))
                .is_some_and(|rules| rules.binary_search(&rule).is_ok())
        };
        // Every anchor occurrence of every rule, in document order, for one sweep.
        let mut occurrences: Vec<(usize, usize)> = anchors
            .iter()
            .enumerate()
            .flat_map(|(slot, a)| a.offsets.iter().map(move |&offset| (offset, slot)))
            .collect();
        occurrences.sort_unstable();
        let mut out = vec![Vec::new(); active.len()];
        // Each rule's previous occurrence (see `fresh`).
        let mut previous: Vec<Option<usize>> = vec![None; active.len()];
        crate::python::for_each_path(
            root,
            occurrences
                .iter()
                .map(|&(offset, slot)| (offset, (offset, slot))),
            |(offset, slot), path| {
                let rule = active[slot].0;
                let known = out[slot].len();
                out[slot].extend(fresh(path, previous[slot]).filter(|&&n| rooted(n, rule)));
                // Outermost first, as the path lists them (candidates of one range keep that
                // order through the sort by position).
                out[slot][known..].reverse();
                previous[slot] = Some(offset);
            },
        );
        Some(out)
    }

    /// One walk of the tree looking every node's kind up in the rule set, entering only nodes
    /// below which some active rule's root may stand.
    fn walk_candidates<'t>(&self, root: Node<'t>, active: &[RuleId]) -> Vec<Vec<Node<'t>>> {
        let mut candidates: Vec<Vec<Node<'t>>> = vec![Vec::new(); active.len()];
        let is_active = |rule: &usize| active.binary_search(&RuleId(*rule));
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let kind = usize::from(node.kind_id());
            // ERROR nodes carry an id past the language's kinds: no rule is rooted there, and
            // anything may stand below them.
            for rule in self.rules.by_root_kind.get(kind).into_iter().flatten() {
                if let Ok(slot) = is_active(rule) {
                    candidates[slot].push(node);
                }
            }
            let worth_entering = self
                .rules
                .rooted_below
                .get(kind)
                .is_none_or(|rules| rules.iter().any(|r| is_active(r).is_ok()));
            if worth_entering && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return candidates;
                }
            }
        }
    }

    /// The root captures of the shared query's matches within `ranges`.
    fn query_candidates<'t>(
        &self,
        text: &str,
        root: Node<'t>,
        active: &[RuleId],
        ranges: impl IntoIterator<Item = Range<usize>>,
    ) -> Vec<Vec<Node<'t>>> {
        let ranges: Vec<Range<usize>> = ranges.into_iter().collect();
        let mut cursor = QueryCursor::new();
        active
            .iter()
            .map(|&id| {
                let Some(query) = self.rules.rule(id).query() else {
                    // A query tree-sitter refused: the walk by root kind finds a superset.
                    return self.walk_candidates(root, &[id]).remove(0);
                };
                let root_capture = query
                    .capture_index_for_name(ROOT_CAPTURE)
                    .expect("every pattern captures its root");
                let mut seen: HashSet<usize> = HashSet::new();
                let mut found = Vec::new();
                for range in &ranges {
                    cursor.set_byte_range(range.clone());
                    let mut matches = cursor.matches(query, root, text.as_bytes());
                    while let Some(m) = matches.next() {
                        for capture in m.captures().iter().filter(|c| c.index == root_capture) {
                            if seen.insert(capture.node.id()) {
                                found.push(capture.node);
                            }
                        }
                    }
                }
                found
            })
            .collect()
    }
}

/// The nodes of `path` (those holding an offset, outermost first) that do not also hold
/// `previous`, an earlier offset: those are an outer part of the path, seen with it already.
/// Read from the inside out, so a run of nested occurrences costs each node once (reading
/// every path whole made 20,000 nested anchored calls take 137 s).
fn fresh<'p, 't>(
    path: &'p [Node<'t>],
    previous: Option<usize>,
) -> impl Iterator<Item = &'p Node<'t>> {
    path.iter()
        .rev()
        .take_while(move |n| previous.is_none_or(|p| n.start_byte() > p))
}

/// The match of `rule` at the candidate `node`, if the pattern and the scopes hold there.
fn match_at<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    text: &str,
    matcher: &Matcher<'_>,
    cache: &scope::ScopeCache<'t>,
) -> Option<Found<'t>> {
    // The pattern alone first: cheap, and most candidates of a whole-tree walk fail it; scopes
    // (and the bindings they seed) only for the rest.
    let mut alone = Bindings::default();
    let matched = matcher.matches_at(&rule.pattern.root, node, &mut alone);
    if matched.is_none() && !matcher.ran_out() {
        return None;
    }
    let seeds = scope::scope_bindings(rule, root, node, text, matcher, cache).ok()?;
    let unseeded = seeds.len() == 1 && seeds[0].is_empty();
    let found = |last: Node<'t>, bindings: Bindings<'t>| {
        if !super::site::stands_at(rule, root, node, last)
            || !super::site::constraints_hold(rule, &bindings, text, matcher, false)
            || !scoped_probes_hold(rule, root, node, &bindings, matcher)
        {
            return None;
        }
        let guarded = guarded(rule, root, node, last, &bindings, matcher);
        Some(Found {
            node,
            last,
            bindings,
            guarded,
            applied: false,
            ambiguous: Vec::new(),
        })
    };
    if let Some(last) = matched
        && unseeded
    {
        // No scope seeds the bindings: the pattern's alone are the match's.
        return found(last, alone);
    }
    let mut all = seeds.into_iter().filter_map(|mut bindings| {
        let last = matcher.matches_at(&rule.pattern.root, node, &mut bindings)?;
        found(last, bindings)
    });
    let mut first = all.next()?;
    // Every other way the scopes match here must bind the same: else the site is ambiguous in
    // the names that differ (the action decides which of those it reads).
    for other in all {
        for (name, capture) in first.bindings.named() {
            let here = capture.text(text);
            let there = other
                .bindings
                .named()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| c.text(text));
            if let Some(there) = there
                && here != there
                && !first.ambiguous.iter().any(|(n, _, _)| n == name)
            {
                first
                    .ambiguous
                    .push((name.to_string(), here.to_string(), there.to_string()));
            }
        }
    }
    Some(first)
}

/// The statements a match spans: `node` alone, or the run of siblings from `node` to `last`.
pub(crate) fn run<'t>(node: Node<'t>, last: Node<'t>) -> Vec<Node<'t>> {
    if node == last {
        return vec![node];
    }
    let Some(parent) = node.parent() else {
        return vec![node];
    };
    crate::python::significant_children(parent)
        .into_iter()
        .filter(|s| node.start_byte() <= s.start_byte() && s.end_byte() <= last.end_byte())
        .collect()
}

/// Whether `unless` occurs within the match, or `not_inside` around it (both seeded with the
/// match's bindings, so shared metavariables must agree).
fn guarded<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    last: Node<'t>,
    bindings: &Bindings<'t>,
    matcher: &Matcher<'_>,
) -> bool {
    if let Some(unless) = &rule.unless
        && run(node, last)
            .into_iter()
            .any(|n| matcher.occurs_in(unless, n, bindings))
    {
        return true;
    }
    if let Some(outer) = &rule.not_inside {
        for n in scope::ancestors(root, node) {
            if matcher.matches(&outer.root, n, &mut bindings.clone()) {
                return true;
            }
        }
    }
    false
}

/// Whether `when: {scope: ...}` probes hold in the class or function enclosing the match,
/// seeded with its bindings (so a metavariable they share with the match must agree).
fn scoped_probes_hold<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    bindings: &Bindings<'t>,
    matcher: &Matcher<'_>,
) -> bool {
    let Some(per) = rule.rule.when.scope else {
        return true;
    };
    let kind = match per {
        Per::Class => "class_definition",
        Per::Function => "function_definition",
    };
    let Some(enclosing) = scope::ancestors(root, node)
        .into_iter()
        .find(|n| n.kind() == kind)
    else {
        return false;
    };
    let occurs = |p: &crate::pattern::Pattern| matcher.occurs_in(p, enclosing, bindings);
    rule.when_has.as_ref().is_none_or(occurs) && !rule.when_lacks.as_ref().is_some_and(occurs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_occurrences_read_each_node_once() {
        let depth = 2_000;
        let text = format!("x = {}1{}\n", "f(".repeat(depth), ")".repeat(depth));
        let tree = crate::python::parse(&text);
        let root = tree.root_node();
        let nodes = crate::python::named_descendants(root).count();
        let offsets: Vec<usize> = text.match_indices('f').map(|(i, _)| i).collect();
        let (mut read, mut previous) = (0, None);
        let mut calls = std::collections::HashSet::new();
        crate::python::for_each_path(root, offsets.iter().map(|&o| (o, o)), |offset, path| {
            for node in fresh(path, previous) {
                read += 1;
                if node.kind() == "call" {
                    calls.insert(node.id());
                }
            }
            previous = Some(offset);
        });
        // Every call is found, and no node is read twice (whole paths: depth² / 2 reads).
        assert_eq!(calls.len(), depth);
        assert!(read <= 2 * nodes, "{read} reads of {nodes} nodes");
    }
}
