//! Which node kinds can stand below which, read from tree-sitter-python's `node-types.json`.
//!
//! A walk looking for candidates of statement-level patterns (assignments, definitions,
//! decorators) need not enter expressions, which hold most of a tree's nodes: no expression
//! contains a statement. The grammar's own node-type table says so for every kind, so the walk
//! prunes by data rather than by a list of special cases.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::python;

#[derive(Deserialize)]
struct NodeType {
    #[serde(rename = "type")]
    kind: String,
    named: bool,
    #[serde(default)]
    fields: HashMap<String, ChildTypes>,
    #[serde(default)]
    children: Option<ChildTypes>,
    #[serde(default)]
    subtypes: Vec<KindRef>,
}

#[derive(Deserialize)]
struct ChildTypes {
    types: Vec<KindRef>,
}

#[derive(Deserialize, Clone, PartialEq, Eq, Hash)]
struct KindRef {
    #[serde(rename = "type")]
    kind: String,
    named: bool,
}

/// For each kind id, the named kind ids that may stand anywhere below a node of that kind
/// (tokens are left out: they hold nothing and root no pattern); `None`
/// for a kind the table does not describe (an ERROR node), below which anything may stand.
#[derive(Debug)]
pub struct Containment {
    /// A bit per kind id.
    below: Vec<Option<Box<[u64]>>>,
}

impl Containment {
    /// Whether a named node of kind `inner` may stand anywhere below a node of kind `outer`.
    pub fn may_contain(&self, outer: u16, inner: u16) -> bool {
        let inner = usize::from(inner);
        match self.below.get(usize::from(outer)) {
            Some(Some(below)) => below
                .get(inner / 64)
                .is_some_and(|word| word >> (inner % 64) & 1 == 1),
            _ => true,
        }
    }
}

/// Kinds tree-sitter gives a construct CPython reads as another: in an annotation `list[int]`
/// is a `generic_type`, `int | None` a `union_type` and `a.b` a `member_type`, where an
/// expression has a `subscript`, a `binary_operator` and an `attribute`.
const TYPE_VIEWS: [(&str, &str); 3] = [
    ("subscript", "generic_type"),
    ("binary_operator", "union_type"),
    ("attribute", "member_type"),
];

/// Kinds that are one CPython node read or assigned to: tree-sitter spells a tuple, a list
/// and a starred item otherwise as a target, and resolves its grammar's ambiguity so that
/// even a value (`y = (*a, *a), b` in a function) can come out as a target's kinds.
const TARGET_VIEWS: [(&str, &str); 4] = [
    ("expression_list", "pattern_list"),
    ("tuple", "tuple_pattern"),
    ("list", "list_pattern"),
    ("list_splat", "list_splat_pattern"),
];

/// The other kinds a pattern node of kind `kind` also matches, as CPython's AST reads them
/// (`subscript` → `generic_type`; `tuple` ↔ `tuple_pattern`).
pub fn alike_kinds(kind: &str) -> Vec<&'static str> {
    let types = TYPE_VIEWS
        .iter()
        .filter(|(e, _)| *e == kind)
        .map(|(_, v)| *v);
    let targets = TARGET_VIEWS
        .iter()
        .filter_map(|&(e, t)| (e == kind).then_some(t).or((t == kind).then_some(e)));
    types.chain(targets).collect()
}

/// Whether the kind `id` is one of tree-sitter's annotation kinds of [`TYPE_VIEWS`], whose
/// children a pattern sees through their `type` wrappers and `type_parameter` brackets.
pub fn is_type_view(id: u16) -> bool {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids: Vec<u16> = TYPE_VIEWS
            .iter()
            .flat_map(|(_, view)| kind_ids(view, true).iter().copied())
            .collect();
        ids.sort_unstable();
        ids
    })
    .binary_search(&id)
    .is_ok()
}

/// Whether `kind` has a target's (or a value's) kind alike, which tree-sitter may choose for
/// the same code wherever it stands (an annotation's kinds stand only in annotations).
pub fn has_target_view(kind: &str) -> bool {
    TARGET_VIEWS.iter().any(|(e, t)| *e == kind || *t == kind)
}

/// The ids a pattern node of kind `kind` matches: that kind's and its [`alike_kinds`]' — so
/// `Optional[$T]` finds `x: Optional[int]` as CPython's AST (a `Subscript` in both) says it
/// should, and a tuple is found whichever of its kinds tree-sitter chose.
pub fn matched_kind_ids(kind: &str, named: bool) -> &'static [u16] {
    static VIEWS: OnceLock<HashMap<String, Vec<u16>>> = OnceLock::new();
    let views = VIEWS.get_or_init(|| {
        let kinds = TYPE_VIEWS.iter().chain(TARGET_VIEWS.iter());
        kinds
            .flat_map(|(a, b)| [*a, *b])
            .map(|kind| {
                let mut ids = kind_ids(kind, true).to_vec();
                for alike in alike_kinds(kind) {
                    ids.extend_from_slice(kind_ids(alike, true));
                }
                (kind.to_string(), ids)
            })
            .collect()
    });
    match views.get(kind) {
        Some(ids) if named => ids,
        _ => kind_ids(kind, named),
    }
}

/// The ids of the kind called `kind` (named or a token): one name may stand for several ids,
/// through aliases.
pub fn kind_ids(kind: &str, named: bool) -> &'static [u16] {
    static IDS: OnceLock<HashMap<(String, bool), Vec<u16>>> = OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let language = python::language();
        let mut ids: HashMap<(String, bool), Vec<u16>> = HashMap::new();
        for id in 0..language.node_kind_count() as u16 {
            if let Some(name) = language.node_kind_for_id(id) {
                let key = (name.to_string(), language.node_kind_is_named(id));
                ids.entry(key).or_default().push(id);
            }
        }
        ids
    });
    ids.get(&(kind.to_string(), named))
        .map_or(&[], Vec::as_slice)
}

/// The containment table of tree-sitter-python, built once.
pub fn containment() -> &'static Containment {
    static TABLE: OnceLock<Containment> = OnceLock::new();
    TABLE.get_or_init(|| build(tree_sitter_python::NODE_TYPES))
}

fn build(node_types: &str) -> Containment {
    let language = python::language();
    let count = language.node_kind_count();
    let Ok(types) = serde_json::from_str::<Vec<NodeType>>(node_types) else {
        // Without the table nothing is pruned: slower, never wrong.
        return Containment {
            below: vec![None; count],
        };
    };
    let tops: Vec<KindRef> = types.iter().map(kind_ref).collect();
    let (kinds, direct, top_at) = direct_children(&types, &tops);
    let n = kinds.len();
    let ids: Vec<&[u16]> = kinds.iter().map(|k| kind_ids(&k.kind, k.named)).collect();
    // Comments and line continuations may stand anywhere, though no entry lists them.
    let extras: Vec<u16> = ["comment", "line_continuation"]
        .iter()
        .flat_map(|k| kind_ids(k, true))
        .copied()
        .collect();
    let mut below: Vec<Option<Box<[u64]>>> = vec![None; count];
    let mut reached = vec![false; n];
    for outer in top_at {
        reached.fill(false);
        let mut bits = vec![0u64; count.div_ceil(64)];
        let mut set = |id: u16| {
            if let Some(word) = bits.get_mut(usize::from(id) / 64) {
                *word |= 1 << (id % 64);
            }
        };
        let mut stack: Vec<usize> = direct[outer].clone();
        while let Some(k) = stack.pop() {
            if !std::mem::replace(&mut reached[k], true) {
                ids[k].iter().for_each(|&id| set(id));
                stack.extend(&direct[k]);
            }
        }
        extras.iter().for_each(|&id| set(id));
        let bits = bits.into_boxed_slice();
        for &id in ids[outer] {
            below[usize::from(id)] = Some(bits.clone());
        }
    }
    Containment { below }
}

/// Every kind the table names, by dense index, for each the concrete kinds that may stand
/// directly below it (supertypes expanded), and the index of each of `tops`. Integers, so
/// the closure runs without hashing names: hashing them for every pair of kinds cost 80% of a
/// small run's instructions.
fn direct_children<'t>(
    types: &'t [NodeType],
    tops: &'t [KindRef],
) -> (Vec<&'t KindRef>, Vec<Vec<usize>>, Vec<usize>) {
    let mut index: HashMap<&KindRef, usize> = HashMap::new();
    let mut kinds: Vec<&KindRef> = Vec::new();
    let named = types.iter().flat_map(|t| {
        let children = t.fields.values().chain(&t.children).flat_map(|c| &c.types);
        t.subtypes.iter().chain(children)
    });
    for k in tops.iter().chain(named) {
        index.entry(k).or_insert_with(|| {
            kinds.push(k);
            kinds.len() - 1
        });
    }
    let n = kinds.len();
    let mut subtypes: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (t, k) in types.iter().zip(tops) {
        subtypes[index[k]] = t.subtypes.iter().map(|s| index[s]).collect();
    }
    // Supertypes (`expression`, `_simple_statement`) never stand in a tree: expand them.
    let mut seen = vec![false; n];
    let mut expand = |k: usize, out: &mut Vec<usize>| {
        seen.fill(false);
        let mut stack = vec![k];
        while let Some(k) = stack.pop() {
            if std::mem::replace(&mut seen[k], true) {
                continue;
            }
            match subtypes[k].as_slice() {
                [] => out.push(k),
                subs => stack.extend(subs),
            }
        }
    };
    let mut direct: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (t, k) in types.iter().zip(tops) {
        let mut children = Vec::new();
        for c in t.fields.values().chain(&t.children).flat_map(|c| &c.types) {
            expand(index[c], &mut children);
        }
        children.sort_unstable();
        children.dedup();
        direct[index[k]] = children;
    }
    let top_at = tops.iter().map(|k| index[k]).collect();
    (kinds, direct, top_at)
}

fn kind_ref(t: &NodeType) -> KindRef {
    KindRef {
        kind: t.kind.clone(),
        named: t.named,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(kind: &str) -> u16 {
        python::language().id_for_node_kind(kind, true)
    }

    #[test]
    fn expressions_hold_no_statements_and_blocks_hold_both() {
        let c = containment();
        assert!(!c.may_contain(id("call"), id("assignment")));
        assert!(!c.may_contain(id("argument_list"), id("expression_statement")));
        assert!(c.may_contain(id("block"), id("assignment")));
        assert!(c.may_contain(id("block"), id("call")));
        assert!(c.may_contain(id("module"), id("decorator")));
        assert!(c.may_contain(id("call"), id("lambda")));
        assert!(c.may_contain(id("call"), id("comment")));
    }
}
