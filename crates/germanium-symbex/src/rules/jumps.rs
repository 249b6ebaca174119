//! `goto` and loops made of labels, following the method body's control-flow graph
//! (`germanium_cfg`). A label that heads a natural loop of the graph is a loop head whose
//! invariants are the label's. Arriving at it from outside the loop (in the text or by a
//! jump) enters the loop: the invariant is checked, what it does not hold is framed away,
//! the variables the loop's statements assign are havocked and the invariant is produced;
//! execution goes on after the label. Arriving at it from inside (a back edge) checks the
//! invariant and ends the path. Moving on to a statement outside the loop leaves it: the
//! frame comes back. The loops being run are part of the state (`State::label_loops`), so
//! a path carries them through joins. Any other `goto` resumes execution at its label,
//! taking back the frames of the `while` loops it leaves; one to the end of a `while` body
//! it is in continues as the body's end does.

use std::collections::{HashMap, HashSet};

use germanium_cfg::{BodyCfg, Problem};
use germanium_semantics::VarId;
use germanium_syntax::ast::{Expr, NodeId, Stmt, StmtKind};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::rules::execute::{assigned_vars, path_end, path_to, Cont};
use crate::rules::termination::Measure;
use crate::state::{Heap, LabelLoopFrame, State};

/// The loops made of labels of the method being verified.
#[derive(Clone, Debug, Default)]
pub struct MethodLoops {
    /// The statements of the method body's graph (those of proof scripts are in none).
    statements: HashSet<NodeId>,
    /// Each loop's label and statements.
    loops: Vec<(String, HashSet<NodeId>)>,
    by_label: HashMap<String, usize>,
}

impl MethodLoops {
    pub fn of(cfg: &BodyCfg) -> MethodLoops {
        let statements = cfg.nodes().iter().filter_map(|n| n.stmt).collect();
        let mut loops: Vec<(String, HashSet<NodeId>)> = cfg.label_loops().into_iter().collect();
        loops.sort_by(|a, b| a.0.cmp(&b.0));
        let by_label = loops
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.clone(), i))
            .collect();
        MethodLoops {
            statements,
            loops,
            by_label,
        }
    }

    /// Whether the statement is one of the method body's and lies outside the loop.
    fn leaves(&self, loop_index: usize, next: Option<NodeId>) -> bool {
        match next {
            None => true,
            Some(s) => self.statements.contains(&s) && !self.loops[loop_index].1.contains(&s),
        }
    }
}

/// A `while` loop whose body is being verified.
#[derive(Clone, Debug)]
pub struct WhileFrame {
    pub id: NodeId,
    /// What the invariant did not hold on entry (a `goto` out of the loop takes it back).
    pub frame: Heap,
    /// The loop's measures at the start of the iteration.
    pub start: Vec<Measure>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// The graph's loops made of labels for the member, or why its jumps cannot be followed.
    pub(crate) fn method_loops(&mut self, cfg: &BodyCfg) -> R<MethodLoops> {
        if let Some(problem) = cfg.problems().first() {
            let (at, what) = match problem {
                Problem::IntoWhileBody { at, .. } => (
                    *at,
                    "a `goto` into the body of a `while` loop from outside it",
                ),
                Problem::Irreducible { at } => (*at, "a loop entered other than at its head"),
            };
            return Err(self.unsupported(at, what));
        }
        Ok(MethodLoops::of(cfg))
    }

    /// Control moves on to `next` (a statement, `None` for the end of the method): the loops
    /// made of labels it lies outside of are left, their frames given back, innermost first.
    pub(crate) fn move_on(&mut self, st: &mut State, next: Option<NodeId>, span: Span) -> R<()> {
        while let Some(innermost) = st.label_loops.last() {
            if !self.member.loops.leaves(innermost.loop_index, next) {
                break;
            }
            let left = st.label_loops.pop().expect("a loop is being run");
            self.readd_frame(st, &left.frame, span)?;
        }
        Ok(())
    }

    /// Whether control arriving at `label` reaches a loop head: entering the loop, or
    /// (`Some(true)`) going back to the head of a loop being run.
    pub(crate) fn loop_headed_by(&self, st: &State, label: &str) -> Option<bool> {
        let index = *self.member.loops.by_label.get(label)?;
        Some(st.label_loops.iter().any(|l| l.loop_index == index))
    }

    /// Enters the loop headed by the label `head`, then runs `k` from the label on.
    pub(crate) fn enter_label_loop(
        &mut self,
        st: State,
        head: &Stmt,
        k: &mut Cont<'_, 'e, 'a>,
    ) -> R<()> {
        let StmtKind::Label(name, _) = &head.kind else {
            return Err(self.unsupported(head.span, "this loop head"));
        };
        let Some(&index) = self.member.loops.by_label.get(&name.name) else {
            return Err(self.unsupported(head.span, "this loop head"));
        };
        let invariants = self.label_invariants(&name.name);
        let frame = self.establish_invariants(&st, invariants)?;
        let mut modified = HashSet::new();
        if let Some(body) = self.member.method.and_then(|m| m.body.as_ref()) {
            assigned_in_loop(
                self.env.sem,
                &body.stmts,
                &self.member.loops.loops[index].1,
                &mut modified,
            );
        }
        let mut inner = State {
            heap: Heap::new(),
            ..st
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
        inner.label_loops.push(LabelLoopFrame {
            loop_index: index,
            frame: frame.heap,
        });
        path_end(k(self, inner))
    }

    /// Back to the head of a loop being run: its invariant must hold again; the path ends.
    pub(crate) fn back_to_loop_head(&mut self, st: State, label: &str) -> R<()> {
        self.preserve_invariants(st, self.label_invariants(label))
    }

    /// `goto label`: takes back the frames of the `while` loops it leaves, then goes back to
    /// a loop head or resumes at the label.
    pub(crate) fn goto(&mut self, mut st: State, s: &Stmt, label: &str) -> R<()> {
        let Some(body) = self.member.method.and_then(|m| m.body.as_ref()) else {
            return Err(self.unsupported(s.span, "`goto` here"));
        };
        let mut to_goto = Vec::new();
        let mut to_label = Vec::new();
        path_to(&body.stmts, &|x: &Stmt| x.id == s.id, &mut to_goto);
        path_to(
            &body.stmts,
            &|x: &Stmt| matches!(&x.kind, StmtKind::Label(l, _) if l.name == label),
            &mut to_label,
        );
        let Some(((label_list, label_index), outer)) = to_label.split_last() else {
            return Err(self.unsupported(s.span, "`goto` to this label"));
        };
        // The compound statements around both the jump and the label.
        let common = to_goto
            .iter()
            .zip(&to_label)
            .take_while(|(a, b)| std::ptr::eq(a.0, b.0) && a.1 == b.1)
            .count();
        let is_while =
            |(list, i): &(&[Stmt], usize)| matches!(list[*i].kind, StmtKind::While { .. });
        if to_label[common..to_label.len() - 1].iter().any(is_while) {
            return Err(self.unsupported(
                s.span,
                "a `goto` into the body of a `while` loop from outside it",
            ));
        }
        let exited = to_goto[common..to_goto.len() - 1]
            .iter()
            .filter(|x| is_while(x))
            .count();
        if exited > self.member.loop_frames.len() {
            return Err(self.unsupported(s.span, "this `goto`"));
        }
        let kept = self.member.loop_frames.len() - exited;
        let frames: Vec<WhileFrame> = self.member.loop_frames.drain(kept..).collect();
        let r = (|| -> R<()> {
            for w in frames.iter().rev() {
                self.readd_frame(&mut st, &w.frame, s.span)?;
            }
            if self.loop_headed_by(&st, label) == Some(true) {
                return self.back_to_loop_head(st, label);
            }
            self.run_from(st, label_list, *label_index, outer)
        })();
        self.member.loop_frames.extend(frames);
        r
    }

    /// Runs `list[from..]`, then what follows each level of `outer`, innermost first, then
    /// the end of the method.
    fn run_from(
        &mut self,
        st: State,
        list: &[Stmt],
        from: usize,
        outer: &[(&[Stmt], usize)],
    ) -> R<()> {
        self.exec_seq(
            st,
            &list[from.min(list.len())..],
            &mut |v: &mut Verifier<'e, 'a>, end| match outer.split_last() {
                None => v.method_end(end),
                Some(((list, index), outer)) => match &list[*index].kind {
                    StmtKind::While { .. } => v.end_of_while_body_reached(end, &list[*index]),
                    _ => v.run_from(end, list, index + 1, outer),
                },
            },
        )
    }

    /// A jump inside a `while` body ran to the body's end: as the body's own end.
    fn end_of_while_body_reached(&mut self, end: State, w: &Stmt) -> R<()> {
        let Some(frame) = self.member.loop_frames.last().cloned() else {
            return Err(self.unsupported(w.span, "this `goto`"));
        };
        if frame.id != w.id {
            return Err(self.unsupported(w.span, "this `goto`"));
        }
        self.end_of_while_body(end, w, &frame.start)
    }

    fn label_invariants(&self, label: &str) -> &'a [Expr] {
        fn find<'x>(stmts: &'x [Stmt], label: &str) -> Option<&'x [Expr]> {
            stmts.iter().find_map(|s| match &s.kind {
                StmtKind::Label(l, invs) if l.name == label => Some(invs.as_slice()),
                StmtKind::Block(b) | StmtKind::While { body: b, .. } => find(&b.stmts, label),
                StmtKind::If {
                    then, otherwise, ..
                } => find(&then.stmts, label)
                    .or_else(|| otherwise.as_ref().and_then(|o| find(&o.stmts, label))),
                _ => None,
            })
        }
        self.member
            .method
            .and_then(|m| m.body.as_ref())
            .and_then(|b| find(&b.stmts, label))
            .unwrap_or(&[])
    }
}

/// The variables the statements of a loop (`members`) assign; statements that leave the
/// loop without coming back belong to it no more than those after it.
fn assigned_in_loop(
    sem: &germanium_semantics::Semantics,
    stmts: &[Stmt],
    members: &HashSet<NodeId>,
    out: &mut HashSet<VarId>,
) {
    for s in stmts {
        match &s.kind {
            StmtKind::Block(b) | StmtKind::While { body: b, .. } => {
                assigned_in_loop(sem, &b.stmts, members, out)
            }
            StmtKind::If {
                then, otherwise, ..
            } => {
                assigned_in_loop(sem, &then.stmts, members, out);
                if let Some(o) = otherwise {
                    assigned_in_loop(sem, &o.stmts, members, out);
                }
            }
            _ if members.contains(&s.id) => assigned_vars(sem, std::slice::from_ref(s), out),
            _ => {}
        }
    }
}
