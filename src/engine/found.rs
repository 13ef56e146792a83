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

impl Found<'_> {
    /// The action `rule` takes here: the rule's, or that of the `match` alternative that
    /// matched (the first that matches this site with what it bound, as when it was found).
    pub(crate) fn action<'r>(
        &self,
        rule: &'r crate::compile::CompiledRule,
        source: &str,
    ) -> &'r crate::rules::model::Action {
        let matcher = crate::pattern::matcher::Matcher::new(source);
        let branch = rule.branch_patterns.iter().position(|p| {
            let mut bindings = self.bindings.clone();
            matcher.matches_at(&p.root, self.node, &mut bindings) == Some(self.last)
        });
        branch.map_or(&rule.rule.action, |i| rule.rule.action_of(i))
    }
}
