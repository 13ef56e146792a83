//! One match of a rule, as finding it and planning on it both read it.

use tree_sitter::Node;

use crate::pattern::matcher::Bindings;

/// One match of a rule.
pub(crate) struct Found<'t> {
    /// The matched node (for a statement sequence, its first statement).
    pub node: Node<'t>,
    /// The last node of the match: `node` itself, or a sequence's last statement.
    pub last: Node<'t>,
    /// What the pattern (and the scopes around it) bound.
    pub bindings: Bindings<'t>,
    /// `unless` or `not_inside` found: the match counts but is left as it is.
    pub guarded: bool,
    /// A site of the shape the action leaves: the patch already applied there.
    pub applied: bool,
    /// Where the scopes around the match bind a metavariable in more than one way (a layer
    /// list built in two branches of an `if`): the name and two of its values. The action
    /// is refused there: which binding runs is decided when the code runs.
    pub ambiguous: Vec<(String, String, String)>,
}
