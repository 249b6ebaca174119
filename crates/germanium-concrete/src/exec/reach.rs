//! What a statement's expressions reach: themselves, and the contracts and bodies of the
//! functions and the bodies of the predicates they use, each walked once. Domain tables,
//! permission-amount reads and demands for values are found this way.

use std::collections::BTreeSet;

use germanium_semantics::visit::walk_expr;
use germanium_semantics::{CallTarget, FieldTarget};
use germanium_syntax::ast::{Expr, ExprKind, Stmt};

use super::Machine;

impl Machine<'_> {
    /// Calls `visit` on every subexpression `exprs` reach (see the module).
    pub(super) fn walk_reachable(&self, exprs: &[&Expr], visit: &mut dyn FnMut(&Expr)) {
        let mut visited = BTreeSet::new();
        let mut todo: Vec<&Expr> = exprs.to_vec();
        while let Some(e) = todo.pop() {
            walk_expr(e, &mut |sub| {
                visit(sub);
                match self.sem.call(sub.id) {
                    Some(CallTarget::Function(name)) if visited.insert(name.clone()) => {
                        if let Some(f) = self.ev.functions.get(name.as_str()) {
                            todo.extend(f.contract.requires.iter());
                            todo.extend(f.contract.ensures.iter());
                            todo.extend(f.body.iter());
                        }
                    }
                    Some(CallTarget::Predicate(name)) if visited.insert(name.clone()) => {
                        todo.extend(self.ev.predicate_body(name));
                    }
                    _ => {}
                }
            });
        }
    }

    /// Whether running `s` may need a value only its evaluation finds it needs (see
    /// `answering_demands`): what it reads reaches a function without a body or an ADT
    /// destructor. Found once per statement.
    pub(super) fn may_demand(&self, s: &Stmt) -> bool {
        if let Some(known) = self.may_demand.borrow().get(&s.id) {
            return *known;
        }
        let mut reads = self.statement_reads(s);
        // Reading inside instances opens the contents of any held: their bodies too.
        if self.reads_inside_instances(&reads) {
            reads.extend(self.ev.predicates.values().filter_map(|p| p.body.as_ref()));
        }
        let mut demands = false;
        self.walk_reachable(&reads, &mut |sub| {
            demands |= match &sub.kind {
                ExprKind::Call(name, _) => {
                    matches!(self.sem.call(sub.id), Some(CallTarget::Function(_)))
                        && self
                            .ev
                            .functions
                            .get(name.name.as_str())
                            .is_some_and(|f| f.body.is_none())
                }
                ExprKind::FieldAccess(..) => matches!(
                    self.sem.field_access(sub.id),
                    Some(FieldTarget::AdtDestructor { .. })
                ),
                _ => false,
            }
        });
        self.may_demand.borrow_mut().insert(s.id, demands);
        demands
    }
}
