//! Runs past a state not known exactly (a package whose footprint Viper chooses, an applied
//! wand whose result is not replayed).
//!
//! There the run makes its state a *lower bound* of the real one: it holds at most what
//! the real state holds, and where it holds a location, the real value. A package takes every
//! permission its right-hand side and proof script could take (every location of a field
//! they name, every instance of a predicate they name, every wand where they handle wands);
//! an apply gives nothing back. From such a state a statement that only exhales, asserts,
//! folds, assigns, allocates, branches on values or inhales pure facts and predicate
//! instances keeps the state a lower bound: what succeeds on less succeeds on more with the
//! same effect, and a value read is the real one. A failure there is real where the failing
//! part is pure and reads no permission amount (`perm`, `forperm`, `applying`), directly or
//! through the functions and predicates it uses.
//!
//! Any other statement (an unfold, a call, a loop, a package, an apply, an inhale of field
//! permissions, anything reading amounts) ends the lower bound: from there on only a failure
//! of that statement that reads no heap is one of a real run. A run past an inexact state
//! that meets a false fact is undecided, never infeasible.

use std::collections::BTreeSet;

use germanium_semantics::visit::{stmt_exprs, walk_expr, walk_stmts};
use germanium_semantics::{CallTarget, FieldTarget};
use germanium_syntax::ast::{BinaryOp, Block, Expr, ExprKind, Stmt, StmtKind};

use super::{Machine, Run};

/// Where a run stopped knowing its state exactly.
#[derive(Clone, Debug)]
pub(super) struct Inexact {
    pub why: String,
    /// The statement after which only a heap-free failure of the next one is real (while
    /// `lower_bound`, the statement where the state became inexact).
    pub at: u64,
    /// Whether the state is still a lower bound of the real one.
    pub lower_bound: bool,
}

/// What a failing part reads, which says whether its failure past an inexact state is real.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reads {
    pub heap: bool,
    pub amounts: bool,
}

impl Reads {
    /// A failure that may read anything (a permission missing, a well-definedness failure).
    pub const ANYTHING: Reads = Reads {
        heap: true,
        amounts: true,
    };
}

/// The fields, predicates and wands an assertion or proof script may take.
#[derive(Default)]
struct Resources {
    fields: BTreeSet<String>,
    predicates: BTreeSet<String>,
    wands: bool,
}

impl Run {
    /// The state is a lower bound of the real one from here on (unless it is already
    /// inexact).
    pub(super) fn lower_bound(&mut self, why: &str) {
        if self.approximate.is_none() {
            self.approximate = Some(Inexact {
                why: why.to_string(),
                at: self.statements,
                lower_bound: true,
            });
        }
    }

    /// Whether a failure that reads `reads` is one of a real run.
    pub(super) fn failure_is_real(&self, reads: Reads) -> bool {
        match &self.approximate {
            None => true,
            Some(i) if i.lower_bound => !reads.amounts,
            Some(i) => self.statements == i.at + 1 && !reads.heap,
        }
    }
}

impl Machine<'_> {
    /// Before statement `s` (counted already): where it would not keep a lower-bound state
    /// one, the state is no longer known at all.
    pub(super) fn keep_lower_bound(&self, run: &mut Run, s: &Stmt) {
        let statements = run.statements;
        match run.approximate.as_mut() {
            Some(i) if i.lower_bound && !self.keeps_lower_bound(s) => {
                i.lower_bound = false;
                i.at = statements - 1;
            }
            _ => {}
        }
    }

    fn keeps_lower_bound(&self, s: &Stmt) -> bool {
        let exprs_read_no_amounts = || stmt_exprs(s).iter().all(|e| !self.reads_amounts(e));
        match &s.kind {
            StmtKind::Assign(_, rhs) => {
                !matches!(self.sem.call(rhs.id), Some(CallTarget::Method(_)))
                    && exprs_read_no_amounts()
            }
            StmtKind::VarDecl(..)
            | StmtKind::New(..)
            | StmtKind::If { .. }
            | StmtKind::Goto(_)
            | StmtKind::Block(_)
            | StmtKind::Assert(_)
            | StmtKind::Exhale(_)
            | StmtKind::Fold(_) => exprs_read_no_amounts(),
            StmtKind::Label(_, invariants) => invariants.is_empty(),
            StmtKind::Inhale(e) | StmtKind::Assume(e) => {
                !self.reads_amounts(e) && gives_no_field_or_wand(e)
            }
            _ => false,
        }
    }

    /// Whether `e` reads permission amounts, itself or through the functions and predicates
    /// it uses.
    pub(super) fn reads_amounts(&self, e: &Expr) -> bool {
        let mut reads = false;
        self.walk_reachable(&[e], &mut |sub| {
            reads |= matches!(
                sub.kind,
                ExprKind::Perm(_)
                    | ExprKind::Forperm { .. }
                    | ExprKind::Applying(..)
                    | ExprKind::InhaleExhale(..)
            );
        });
        reads
    }

    /// A package whose footprint is not known exactly: the state gives up everything `rhs`
    /// and `script` could take, and is a lower bound from here on.
    pub(super) fn give_up_bound(
        &self,
        run: &mut Run,
        rhs: &Expr,
        script: Option<&Block>,
        why: &str,
    ) {
        let mut taken = Resources::default();
        self.resources(rhs, &mut taken);
        if let Some(b) = script {
            walk_stmts(b, &mut |s| {
                taken.wands |= matches!(s.kind, StmtKind::Apply(_) | StmtKind::Package(..));
                for e in stmt_exprs(s) {
                    self.resources(e, &mut taken);
                }
            });
        }
        run.heap.perms.retain(|(_, f), _| !taken.fields.contains(f));
        run.heap
            .predicates
            .retain(|(p, _), _| !taken.predicates.contains(p));
        run.fresh.retain(|(p, _)| !taken.predicates.contains(p));
        if taken.wands {
            run.heap.wands.clear();
        }
        run.lower_bound(why);
    }

    /// Adds the fields, predicates (and those their bodies name) and wands `e` names.
    fn resources(&self, e: &Expr, into: &mut Resources) {
        let mut bodies: Vec<&Expr> = Vec::new();
        walk_expr(e, &mut |sub| match &sub.kind {
            ExprKind::Binary(BinaryOp::Wand, ..) | ExprKind::Applying(..) => into.wands = true,
            ExprKind::FieldAccess(..) => {
                if let Some(FieldTarget::Field(f)) = self.sem.field_access(sub.id) {
                    into.fields.insert(f.clone());
                }
            }
            ExprKind::Call(..) => {
                if let Some(CallTarget::Predicate(p)) = self.sem.call(sub.id) {
                    if into.predicates.insert(p.clone()) {
                        bodies.extend(self.ev.predicate_body(p));
                    }
                }
            }
            _ => {}
        });
        for b in bodies {
            self.resources(b, into);
        }
    }
}

/// Whether inhaling `e` gives no field permission and no wand (only pure facts and
/// predicate instances, which no amount held makes infeasible).
fn gives_no_field_or_wand(e: &Expr) -> bool {
    let mut gives = false;
    walk_expr(e, &mut |sub| match &sub.kind {
        ExprKind::Acc(loc, _) => gives |= matches!(loc.kind, ExprKind::FieldAccess(..)),
        ExprKind::Binary(BinaryOp::Wand, ..) => gives = true,
        _ => {}
    });
    !gives
}
