//! Back edges, reducibility and natural loops.

use std::collections::BTreeSet;

use crate::dominators::Dominators;
use crate::{Node, Problem, Shape};

/// A natural loop: its head and every node of it (the head included), i.e. the nodes that
/// reach a back edge into the head without passing the head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub head: usize,
    pub members: BTreeSet<usize>,
}

/// The natural loops of the reachable graph, one per head, in the order of the heads; and
/// an `Irreducible` problem if the graph without its back edges still has a cycle.
pub fn natural_loops(
    nodes: &[Node],
    reachable: &[bool],
    dominators: &Dominators,
) -> (Vec<Loop>, Vec<Problem>) {
    let is_back = |from: usize, to: usize| dominators.dominates(to, from);
    let mut predecessors = vec![Vec::new(); nodes.len()];
    let mut back_edges = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        if !reachable[n] {
            continue;
        }
        for &s in &node.successors {
            predecessors[s].push(n);
            if is_back(n, s) {
                back_edges.push((n, s));
            }
        }
    }
    let mut problems = Vec::new();
    if let Some(inside) = forward_cycle(nodes, reachable, &is_back) {
        let at = second_entry(nodes, &predecessors, inside);
        problems.push(Problem::Irreducible { at: nodes[at].span });
    }
    let mut loops: Vec<Loop> = Vec::new();
    back_edges.sort();
    for (source, head) in back_edges {
        let index = match loops.iter().position(|l| l.head == head) {
            Some(i) => i,
            None => {
                loops.push(Loop {
                    head,
                    members: BTreeSet::from([head]),
                });
                loops.len() - 1
            }
        };
        let members = &mut loops[index].members;
        let mut stack = Vec::new();
        if members.insert(source) {
            stack.push(source);
        }
        while let Some(n) = stack.pop() {
            for &p in &predecessors[n] {
                if members.insert(p) {
                    stack.push(p);
                }
            }
        }
    }
    loops.sort_by_key(|l| l.head);
    (loops, problems)
}

/// Where the cycle through `inside` is entered from outside other than at its first entry
/// in the text: preferably a `goto`, the usual culprit.
fn second_entry(nodes: &[Node], predecessors: &[Vec<usize>], inside: usize) -> usize {
    let closure = |step: &dyn Fn(usize) -> Vec<usize>| {
        let mut seen = BTreeSet::from([inside]);
        let mut stack = vec![inside];
        while let Some(n) = stack.pop() {
            for m in step(n) {
                if seen.insert(m) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let forward = closure(&|n| nodes[n].successors.clone());
    let backward = closure(&|n| predecessors[n].clone());
    let component: BTreeSet<usize> = forward.intersection(&backward).copied().collect();
    let mut entries: Vec<(usize, usize)> = component
        .iter()
        .flat_map(|&v| {
            predecessors[v]
                .iter()
                .filter(|u| !component.contains(u))
                .map(move |&u| (v, u))
        })
        .collect();
    entries.sort();
    let first_target = entries.first().map(|e| e.0);
    let later: Vec<usize> = entries
        .iter()
        .filter(|e| Some(e.0) != first_target)
        .map(|e| e.1)
        .collect();
    later
        .iter()
        .copied()
        .find(|&u| matches!(nodes[u].shape, Shape::Goto(_)))
        .or(later.first().copied())
        .unwrap_or(inside)
}

/// A node on a cycle of forward (non-back) edges, if there is one.
fn forward_cycle(
    nodes: &[Node],
    reachable: &[bool],
    is_back: &dyn Fn(usize, usize) -> bool,
) -> Option<usize> {
    // 0 unvisited, 1 on the stack, 2 done.
    let mut colour = vec![0u8; nodes.len()];
    for start in 0..nodes.len() {
        if !reachable[start] || colour[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0)];
        colour[start] = 1;
        while let Some((n, i)) = stack.pop() {
            let Some(&s) = nodes[n].successors.get(i) else {
                colour[n] = 2;
                continue;
            };
            stack.push((n, i + 1));
            if is_back(n, s) {
                continue;
            }
            match colour[s] {
                0 => {
                    colour[s] = 1;
                    stack.push((s, 0));
                }
                1 => return Some(n),
                _ => {}
            }
        }
    }
    None
}

/// `goto`s from outside a `while` statement into its body: they enter the loop without
/// passing its head (every other edge into a body comes from its `while`).
pub fn jumps_into_while_bodies(nodes: &[Node], reachable: &[bool]) -> Vec<Problem> {
    let whiles: Vec<usize> = (0..nodes.len())
        .filter(|&w| nodes[w].shape == Shape::While)
        .collect();
    let mut problems = Vec::new();
    for (g, goto) in nodes.iter().enumerate() {
        if !reachable[g] || !matches!(goto.shape, Shape::Goto(_)) {
            continue;
        }
        for &target in &goto.successors {
            let inside = |w: usize, n: usize| w < n && n < nodes[w].subtree_end;
            if let Some(&w) = whiles.iter().find(|&&w| inside(w, target) && !inside(w, g)) {
                problems.push(Problem::IntoWhileBody {
                    at: goto.span,
                    body_of: nodes[w].span,
                });
            }
        }
    }
    problems
}
