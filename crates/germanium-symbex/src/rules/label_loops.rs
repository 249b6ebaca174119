//! Loops made of labels and `goto`: a label that some later `goto` jumps back to is a loop
//! head; its invariants play the part of a `while` loop's. The loop's body is the label's
//! statement list from the label to the statement holding the last jump back. On entry the
//! invariant is checked and what it does not hold is framed away; the body runs from a
//! state with the assigned variables havocked and only the invariant; a jump back checks
//! the invariant and ends the path; running past the body takes the frame back.

use std::collections::{HashMap, HashSet};

use germanium_syntax::ast::{Expr, NodeId, Stmt, StmtKind};

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::rules::execute::{assigned_vars, path_end, path_to, Cont};
use crate::state::{Heap, State};

/// A loop made of labels whose body is being executed.
#[derive(Clone, Debug)]
pub struct LabelLoop<'a> {
    pub name: String,
    pub invariants: &'a [Expr],
    /// What the invariant did not hold on entry, given back when the loop is left.
    pub frame: Heap,
    /// The statements of the body (in the label's list, after the label).
    pub body: HashSet<NodeId>,
    /// The body's last statement.
    pub last: NodeId,
}

impl LabelLoop<'_> {
    /// Whether the statement at `path` (as from `path_to`) lies in the loop's body.
    pub fn contains(&self, path: &[(&[Stmt], usize)]) -> bool {
        path.iter()
            .any(|(list, i)| self.body.contains(&list[*i].id))
    }
}

/// The loop heads of a method body: label name → the last statement (in the label's list)
/// holding a `goto` back to it.
pub fn loop_heads(body: &[Stmt]) -> HashMap<String, NodeId> {
    let mut gotos = Vec::new();
    collect_gotos(body, &mut gotos);
    let mut heads: HashMap<String, (usize, NodeId)> = HashMap::new();
    for goto in gotos {
        let StmtKind::Goto(label) = &goto.kind else {
            continue;
        };
        let mut to_goto = Vec::new();
        let mut to_label = Vec::new();
        path_to(body, &|x: &Stmt| x.id == goto.id, &mut to_goto);
        path_to(
            body,
            &|x: &Stmt| matches!(&x.kind, StmtKind::Label(l, _) if l.name == label.name),
            &mut to_label,
        );
        let Some(k) = to_label.len().checked_sub(1) else {
            continue;
        };
        let same_prefix = to_goto.len() > k
            && to_label[..k]
                .iter()
                .zip(&to_goto[..k])
                .all(|(a, b)| std::ptr::eq(a.0, b.0) && a.1 == b.1)
            && std::ptr::eq(to_label[k].0, to_goto[k].0);
        if same_prefix && to_goto[k].1 >= to_label[k].1 {
            let (list, i) = to_goto[k];
            let end = heads.entry(label.name.clone()).or_insert((i, list[i].id));
            if i > end.0 {
                *end = (i, list[i].id);
            }
        }
    }
    heads
        .into_iter()
        .map(|(name, (_, id))| (name, id))
        .collect()
}

/// The `goto`s that can be reached: statements after a `goto` up to the next label are dead
/// (Viper's control-flow graph has no edges from them).
fn collect_gotos<'x>(stmts: &'x [Stmt], out: &mut Vec<&'x Stmt>) {
    let mut dead = false;
    for s in stmts {
        if let StmtKind::Label(..) = s.kind {
            dead = false;
        }
        if dead {
            continue;
        }
        match &s.kind {
            StmtKind::Goto(_) => {
                out.push(s);
                dead = true;
            }
            StmtKind::Block(b) | StmtKind::While { body: b, .. } => collect_gotos(&b.stmts, out),
            StmtKind::If {
                then, otherwise, ..
            } => {
                collect_gotos(&then.stmts, out);
                if let Some(o) = otherwise {
                    collect_gotos(&o.stmts, out);
                }
            }
            _ => {}
        }
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Runs the loop headed by `list[index]` (a label), then `list[end + 1..]` and `k`.
    pub fn exec_label_loop(
        &mut self,
        st: State,
        list: &[Stmt],
        index: usize,
        end: usize,
        k: &mut Cont<'_, 'e, 'a>,
    ) -> R<()> {
        let head = &list[index];
        let StmtKind::Label(name, _) = &head.kind else {
            return self.exec_seq(st, &list[index..], k);
        };
        // The invariants live in the program (lifetime 'a): find them through the method.
        let invariants = self.label_invariants(&name.name);
        let frame = self.establish_invariants(&st, invariants)?;
        let mut modified = HashSet::new();
        assigned_vars(
            self.env.sem,
            &list[index + 1..=end.min(list.len() - 1)],
            &mut modified,
        );
        let mut inner = State {
            store: st.store.clone(),
            heap: Heap::new(),
            old_heaps: st.old_heaps.clone(),
        };
        self.havoc(&mut inner, &modified, head)?;
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        for inv in invariants {
            self.produce(&mut inner, inv, &wellformed.for_clause(inv))?;
        }
        inner
            .old_heaps
            .insert(name.name.clone(), inner.heap.clone());
        self.member.label_loops.push(LabelLoop {
            name: name.name.clone(),
            invariants,
            frame: frame.heap.clone(),
            body: list[index + 1..=end.min(list.len() - 1)]
                .iter()
                .map(|x| x.id)
                .collect(),
            last: list[end.min(list.len() - 1)].id,
        });
        let body = &list[index + 1..=end.min(list.len() - 1)];
        let after = &list[end.min(list.len() - 1) + 1..];
        let frame_heap = frame.heap.clone();
        let depth = self.member.label_loops.len();
        let r = self.exec_seq(
            inner,
            body,
            &mut |v: &mut Verifier<'e, 'a>, mut out: State| {
                // Leaving the loop by running past its body: the frame comes back.
                let inner_loops = v.member.label_loops.split_off(depth - 1);
                v.readd_frame(&mut out, &frame_heap, head.span)?;
                let r = v.exec_seq(out, after, k);
                v.member.label_loops.extend(inner_loops);
                r
            },
        );
        self.member.label_loops.truncate(depth - 1);
        path_end(r)
    }

    /// `goto` back to an enclosing loop head: the invariant must hold again; the path ends.
    pub fn goto_loop_head(&mut self, mut st: State, label: &str) -> R<()> {
        let Some(lp) = self
            .member
            .label_loops
            .iter()
            .rev()
            .find(|l| l.name == label)
            .cloned()
        else {
            return Ok(());
        };
        let preserved = ErrorContext::at_conjunct(
            "invariant.not.preserved",
            "Loop invariant might not be preserved.",
        );
        let heap = st.heap.clone();
        self.with_modes(
            |m| m.lenient_reads = true,
            |v| -> R<()> {
                for inv in lp.invariants {
                    v.consume(&mut st, &heap, inv, &preserved.for_clause(inv))?;
                }
                Ok(())
            },
        )
    }

    fn label_invariants(&self, label: &str) -> &'a [Expr] {
        fn find<'x>(stmts: &'x [Stmt], label: &str) -> Option<&'x [Expr]> {
            for s in stmts {
                let found = match &s.kind {
                    StmtKind::Label(l, invs) if l.name == label => Some(invs.as_slice()),
                    StmtKind::Block(b) | StmtKind::While { body: b, .. } => find(&b.stmts, label),
                    StmtKind::If {
                        then, otherwise, ..
                    } => find(&then.stmts, label)
                        .or_else(|| otherwise.as_ref().and_then(|o| find(&o.stmts, label))),
                    _ => None,
                };
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        self.member
            .method
            .and_then(|m| m.body.as_ref())
            .and_then(|b| find(&b.stmts, label))
            .unwrap_or(&[])
    }
}
