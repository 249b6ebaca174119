//! From statement lists to nodes and edges.

use std::collections::HashMap;

use germanium_syntax::ast::{Block, Stmt, StmtKind};

use crate::{Node, Shape};

pub struct Graph {
    pub nodes: Vec<Node>,
    pub entry: usize,
    pub exit: usize,
}

impl Graph {
    pub fn of(body: &Block) -> Graph {
        let mut nodes = Vec::new();
        let mut labels = HashMap::new();
        for s in &body.stmts {
            allocate(s, &mut nodes, &mut labels);
        }
        let exit = nodes.len();
        nodes.push(Node {
            stmt: None,
            span: body.span,
            shape: Shape::Exit,
            successors: Vec::new(),
            subtree_end: exit + 1,
        });
        let mut next_index = 0;
        let entry = connect(&body.stmts, exit, &mut nodes, &labels, &mut next_index);
        Graph { nodes, entry, exit }
    }

    /// Which nodes a path from the entry reaches (iteratively: bodies can be long).
    pub fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![self.entry];
        seen[self.entry] = true;
        while let Some(n) = stack.pop() {
            for &s in &self.nodes[n].successors {
                if !seen[s] {
                    seen[s] = true;
                    stack.push(s);
                }
            }
        }
        seen
    }
}

/// Numbers `s` and the statements inside it in preorder.
fn allocate(s: &Stmt, nodes: &mut Vec<Node>, labels: &mut HashMap<String, usize>) {
    let index = nodes.len();
    let shape = match &s.kind {
        StmtKind::Label(name, _) => {
            labels.entry(name.name.clone()).or_insert(index);
            Shape::Label(name.name.clone())
        }
        StmtKind::Goto(name) => Shape::Goto(name.name.clone()),
        StmtKind::If { .. } => Shape::If,
        StmtKind::While { .. } => Shape::While,
        StmtKind::Block(_) => Shape::Block,
        _ => Shape::Simple,
    };
    nodes.push(Node {
        stmt: Some(s.id),
        span: s.span,
        shape,
        successors: Vec::new(),
        subtree_end: index + 1,
    });
    for inner in children(s) {
        for c in &inner.stmts {
            allocate(c, nodes, labels);
        }
    }
    nodes[index].subtree_end = nodes.len();
}

/// The statement lists directly inside `s`.
fn children(s: &Stmt) -> Vec<&Block> {
    match &s.kind {
        StmtKind::If {
            then, otherwise, ..
        } => std::iter::once(then).chain(otherwise.as_ref()).collect(),
        StmtKind::While { body, .. } | StmtKind::Block(body) => vec![body],
        _ => Vec::new(),
    }
}

/// Gives the statements of `stmts` their successors, `after` following the last one;
/// returns the node control reaches first (`after` for an empty list). `next_index` walks
/// the preorder numbering of `allocate` alongside.
fn connect(
    stmts: &[Stmt],
    after: usize,
    nodes: &mut [Node],
    labels: &HashMap<String, usize>,
    next_index: &mut usize,
) -> usize {
    // Numbers in preorder first, so that each statement knows its node.
    let mut indices = Vec::with_capacity(stmts.len());
    for _ in stmts {
        indices.push(*next_index);
        *next_index = nodes[*next_index].subtree_end;
    }
    let mut next = after;
    for (s, &index) in stmts.iter().zip(&indices).rev() {
        let mut inner_index = index + 1;
        let successors = match &s.kind {
            StmtKind::Goto(name) => labels.get(&name.name).copied().into_iter().collect(),
            StmtKind::If {
                then, otherwise, ..
            } => {
                let t = connect(&then.stmts, next, nodes, labels, &mut inner_index);
                let e = match otherwise {
                    Some(o) => connect(&o.stmts, next, nodes, labels, &mut inner_index),
                    None => next,
                };
                if t == e {
                    vec![t]
                } else {
                    vec![t, e]
                }
            }
            StmtKind::While { body, .. } => {
                let b = connect(&body.stmts, index, nodes, labels, &mut inner_index);
                vec![b, next]
            }
            StmtKind::Block(b) => vec![connect(&b.stmts, next, nodes, labels, &mut inner_index)],
            _ => vec![next],
        };
        nodes[index].successors = successors;
        next = index;
    }
    next
}
