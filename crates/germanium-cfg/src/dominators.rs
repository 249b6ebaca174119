//! Dominators by the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast
//! Dominance Algorithm"), with the dominator tree numbered so that a dominance test is two
//! comparisons.

use crate::Node;

pub struct Dominators {
    /// Immediate dominator of each reachable node (the entry's is itself).
    idom: Vec<Option<usize>>,
    /// Preorder interval of each reachable node in the dominator tree.
    enter: Vec<usize>,
    leave: Vec<usize>,
}

impl Dominators {
    pub fn of(nodes: &[Node], entry: usize, reachable: &[bool]) -> Dominators {
        let order = reverse_postorder(nodes, entry);
        let mut position = vec![usize::MAX; nodes.len()];
        for (i, &n) in order.iter().enumerate() {
            position[n] = i;
        }
        let mut predecessors = vec![Vec::new(); nodes.len()];
        for (n, node) in nodes.iter().enumerate() {
            if reachable[n] {
                for &s in &node.successors {
                    predecessors[s].push(n);
                }
            }
        }
        let mut idom: Vec<Option<usize>> = vec![None; nodes.len()];
        idom[entry] = Some(entry);
        let mut changed = true;
        while changed {
            changed = false;
            for &n in order.iter().skip(1) {
                let mut new_idom: Option<usize> = None;
                for &p in &predecessors[n] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => p,
                        Some(d) => intersect(&idom, &position, p, d),
                    });
                }
                if new_idom.is_some() && idom[n] != new_idom {
                    idom[n] = new_idom;
                    changed = true;
                }
            }
        }
        let (enter, leave) = tree_intervals(&idom, entry);
        Dominators { idom, enter, leave }
    }

    /// Whether `a` dominates `b` (both reachable; every node dominates itself).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        self.idom[a].is_some()
            && self.idom[b].is_some()
            && self.enter[a] <= self.enter[b]
            && self.leave[b] <= self.leave[a]
    }
}

fn intersect(idom: &[Option<usize>], position: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while position[a] > position[b] {
            a = idom[a].expect("processed nodes have dominators");
        }
        while position[b] > position[a] {
            b = idom[b].expect("processed nodes have dominators");
        }
    }
    a
}

/// The reachable nodes in reverse postorder of a depth-first search from `entry`.
fn reverse_postorder(nodes: &[Node], entry: usize) -> Vec<usize> {
    let mut visited = vec![false; nodes.len()];
    let mut post = Vec::new();
    // (node, next successor to look at)
    let mut stack = vec![(entry, 0)];
    visited[entry] = true;
    while let Some((n, i)) = stack.pop() {
        if let Some(&s) = nodes[n].successors.get(i) {
            stack.push((n, i + 1));
            if !visited[s] {
                visited[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(n);
        }
    }
    post.reverse();
    post
}

/// Preorder entry and exit numbers of the dominator tree.
fn tree_intervals(idom: &[Option<usize>], entry: usize) -> (Vec<usize>, Vec<usize>) {
    let mut children = vec![Vec::new(); idom.len()];
    for (n, d) in idom.iter().enumerate() {
        if let Some(d) = *d {
            if n != entry {
                children[d].push(n);
            }
        }
    }
    let mut enter = vec![usize::MAX; idom.len()];
    let mut leave = vec![0; idom.len()];
    let mut clock = 0;
    let mut stack = vec![(entry, 0)];
    enter[entry] = clock;
    while let Some((n, i)) = stack.pop() {
        if let Some(&c) = children[n].get(i) {
            stack.push((n, i + 1));
            clock += 1;
            enter[c] = clock;
            stack.push((c, 0));
        } else {
            leave[n] = clock;
        }
    }
    (enter, leave)
}
