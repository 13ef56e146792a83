//! Which node kinds can stand below which, read from tree-sitter-python's `node-types.json`.
//!
//! A walk looking for candidates of statement-level patterns (assignments, definitions,
//! decorators) need not enter expressions, which hold most of a tree's nodes: no expression
//! contains a statement. The grammar's own node-type table says so for every kind, so the walk
//! prunes by data rather than by a list of special cases.

use std::collections::{HashMap, HashSet};
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
    below: Vec<Option<HashSet<u16>>>,
}

impl Containment {
    /// Whether a named node of kind `inner` may stand anywhere below a node of kind `outer`.
    pub fn may_contain(&self, outer: u16, inner: u16) -> bool {
        match self.below.get(usize::from(outer)) {
            Some(Some(below)) => below.contains(&inner),
            _ => true,
        }
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
    let subtypes: HashMap<KindRef, Vec<KindRef>> = types
        .iter()
        .filter(|t| !t.subtypes.is_empty())
        .map(|t| (kind_ref(t), t.subtypes.clone()))
        .collect();
    // Supertypes (`expression`, `_simple_statement`) never stand in a tree: expand them.
    let expand = |k: &KindRef| -> Vec<KindRef> {
        let mut out = Vec::new();
        let mut stack = vec![k.clone()];
        let mut seen = HashSet::new();
        while let Some(k) = stack.pop() {
            if !seen.insert(k.clone()) {
                continue;
            }
            match subtypes.get(&k) {
                Some(subs) => stack.extend(subs.iter().cloned()),
                None => out.push(k),
            }
        }
        out
    };
    let direct: HashMap<KindRef, HashSet<KindRef>> = types
        .iter()
        .map(|t| {
            let children = t
                .fields
                .values()
                .chain(&t.children)
                .flat_map(|c| &c.types)
                .flat_map(&expand)
                .collect();
            (kind_ref(t), children)
        })
        .collect();
    let ids_of = |k: &KindRef| -> Vec<u16> { kind_ids(&k.kind, k.named).to_vec() };
    // Comments and line continuations may stand anywhere, though no entry lists them.
    let extras: Vec<u16> = ["comment", "line_continuation"]
        .iter()
        .flat_map(|k| {
            ids_of(&KindRef {
                kind: k.to_string(),
                named: true,
            })
        })
        .collect();
    let mut below: Vec<Option<HashSet<u16>>> = vec![None; count];
    for outer in direct.keys() {
        let mut reach: HashSet<KindRef> = HashSet::new();
        let mut stack: Vec<&KindRef> = direct[outer].iter().collect();
        while let Some(k) = stack.pop() {
            if reach.insert(k.clone())
                && let Some(next) = direct.get(k)
            {
                stack.extend(next);
            }
        }
        let mut ids: HashSet<u16> = reach.iter().flat_map(&ids_of).collect();
        ids.extend(&extras);
        for id in ids_of(outer) {
            below[usize::from(id)] = Some(ids.clone());
        }
    }
    Containment { below }
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
