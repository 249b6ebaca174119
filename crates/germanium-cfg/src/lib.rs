//! The control-flow graph of a method body, built once from the syntax tree for every back
//! end.
//!
//! Every statement is a node (compound statements too: an `if` is its condition, a `while`
//! its loop head, a block its entry), plus one exit node for the end of the body. Edges follow
//! Viper's semantics: a statement flows to the next one of its list, the end of a list to
//! what follows the compound statement around it (for a `while` body, the `while` again), a
//! `goto` to its label. From the graph come its dominators, its back edges (an edge whose
//! target dominates its source), and the natural loop of each back-edge target, as Viper's
//! control-flow graphs have them: a label that is the target of a back edge heads a loop
//! whose invariant is the label's, and a body whose cycles are not all entered through one
//! head (an irreducible graph) is one Viper does not verify.

mod build;
mod dominators;
mod loops;

use std::collections::{HashMap, HashSet};

use germanium_syntax::ast::{Block, NodeId};
use germanium_syntax::span::Span;

pub use loops::Loop;

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A statement that neither branches nor jumps.
    Simple,
    Label(String),
    Goto(String),
    If,
    While,
    Block,
    /// The end of the body (the postcondition follows).
    Exit,
}

#[derive(Clone, Debug)]
pub struct Node {
    /// The statement, `None` for the exit.
    pub stmt: Option<NodeId>,
    pub span: Span,
    pub shape: Shape,
    pub successors: Vec<usize>,
    /// The nodes syntactically inside this one are `index + 1 .. subtree_end` (nodes are
    /// numbered in preorder).
    pub subtree_end: usize,
}

/// Why a body's graph is not one the verifiers follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A cycle that can be entered at more than one statement: `at` is a statement whose
    /// edge enters it other than at its head.
    Irreducible { at: Span },
    /// A jump from outside a `while` loop into its body, bypassing the loop's head.
    IntoWhileBody { at: Span, body_of: Span },
}

/// A method body's control-flow graph with its loops.
#[derive(Clone, Debug)]
pub struct BodyCfg {
    nodes: Vec<Node>,
    by_stmt: HashMap<NodeId, usize>,
    entry: usize,
    exit: usize,
    reachable: Vec<bool>,
    loops: Vec<Loop>,
    problems: Vec<Problem>,
}

/// Whether `body` has a `goto` anywhere (without one its control flow is the syntax's own,
/// and no label heads a loop).
pub fn has_jumps(body: &Block) -> bool {
    fn any(stmts: &[germanium_syntax::ast::Stmt]) -> bool {
        use germanium_syntax::ast::StmtKind;
        stmts.iter().any(|s| match &s.kind {
            StmtKind::Goto(_) => true,
            StmtKind::If {
                then, otherwise, ..
            } => any(&then.stmts) || otherwise.as_ref().is_some_and(|o| any(&o.stmts)),
            StmtKind::While { body, .. } | StmtKind::Block(body) => any(&body.stmts),
            _ => false,
        })
    }
    any(&body.stmts)
}

impl BodyCfg {
    /// The graph of `body`; `goto`s to labels the body does not declare have no edge (the
    /// consistency check reports them).
    pub fn of(body: &Block) -> BodyCfg {
        let graph = build::Graph::of(body);
        let reachable = graph.reachable();
        let dominators = dominators::Dominators::of(&graph.nodes, graph.entry, &reachable);
        let (loops, mut problems) = loops::natural_loops(&graph.nodes, &reachable, &dominators);
        problems.extend(loops::jumps_into_while_bodies(&graph.nodes, &reachable));
        BodyCfg {
            by_stmt: graph
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| n.stmt.map(|s| (s, i)))
                .collect(),
            nodes: graph.nodes,
            entry: graph.entry,
            exit: graph.exit,
            reachable,
            loops,
            problems,
        }
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn entry(&self) -> usize {
        self.entry
    }

    pub fn exit(&self) -> usize {
        self.exit
    }

    /// The node of a statement of the body.
    pub fn node_of(&self, stmt: NodeId) -> Option<usize> {
        self.by_stmt.get(&stmt).copied()
    }

    /// Whether some path from the start of the body reaches the statement.
    pub fn is_reachable(&self, stmt: NodeId) -> bool {
        self.node_of(stmt).is_some_and(|n| self.reachable[n])
    }

    /// The natural loops, one per head (the `while` loops among them).
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// The loops headed by labels, by label name, with the statements of each loop.
    pub fn label_loops(&self) -> HashMap<String, HashSet<NodeId>> {
        self.loops
            .iter()
            .filter_map(|l| match &self.nodes[l.head].shape {
                Shape::Label(name) => Some((
                    name.clone(),
                    l.members
                        .iter()
                        .filter_map(|&m| self.nodes[m].stmt)
                        .collect(),
                )),
                _ => None,
            })
            .collect()
    }

    /// Why the verifiers cannot follow this graph, if they cannot.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

#[cfg(test)]
mod tests;
