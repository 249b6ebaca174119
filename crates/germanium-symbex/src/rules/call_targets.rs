//! Targets of assignments that are not a single local variable: field writes, and the
//! targets of a method call or allocation. As in Viper, `e.f, y := m(..)` (and
//! `e.f := new(..)`) evaluates the receiver `e` first, then makes the call, then assigns
//! the local targets and writes the fields in order; a field write needs full permission.

use germanium_semantics::VarId;
use germanium_smt::Term;
use germanium_syntax::ast::{Expr, ExprKind, Stmt};

use crate::errors::{ErrorContext, Reason};
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::state::{Permission, Resource, State};

/// Where one result of a call or allocation goes.
pub enum ResultTarget<'x> {
    Local(VarId),
    /// `receiver.field`, the receiver evaluated before the call; `at` is the target as
    /// written (for errors).
    Field {
        field: String,
        receiver: Term,
        at: &'x Expr,
    },
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Resolves the targets of a call, evaluating field receivers in the current state.
    pub fn call_targets<'x>(
        &mut self,
        st: &State,
        s: &Stmt,
        targets: &'x [Expr],
    ) -> R<Vec<ResultTarget<'x>>> {
        let mut out = Vec::new();
        for target in targets {
            out.push(self.call_target(st, s, target)?);
        }
        Ok(out)
    }

    pub fn call_target<'x>(
        &mut self,
        st: &State,
        s: &Stmt,
        target: &'x Expr,
    ) -> R<ResultTarget<'x>> {
        match &target.kind {
            ExprKind::Ident(_) => Ok(ResultTarget::Local(self.var_of(target)?)),
            ExprKind::FieldAccess(rcv, _) => {
                let (field, _) = self.field_location(target)?;
                let ctx = ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
                let heap = st.heap.clone();
                let receiver = self.eval(st, &heap, rcv, &ctx)?;
                Ok(ResultTarget::Field {
                    field,
                    receiver,
                    at: target,
                })
            }
            _ => Err(self.unsupported(target.span, "this assignment target")),
        }
    }

    /// Assigns `values` to `targets`: local variables first, then the fields in order.
    pub fn assign_call_results(
        &mut self,
        st: &mut State,
        s: &Stmt,
        targets: &[ResultTarget<'_>],
        values: Vec<Term>,
    ) -> R<()> {
        let mut writes = Vec::new();
        for (target, value) in targets.iter().zip(values) {
            match target {
                ResultTarget::Local(var) => {
                    st.store.insert(*var, value);
                }
                ResultTarget::Field {
                    field,
                    receiver,
                    at,
                } => writes.push((field, receiver, *at, value)),
            }
        }
        for (field, receiver, at, value) in writes {
            self.write_field(st, s, at, field, receiver.clone(), value)?;
        }
        Ok(())
    }

    /// `receiver.field := value` (`target` as written, for errors): needs full permission,
    /// held by one chunk or spread over chunks that may be the location.
    pub fn write_field(
        &mut self,
        st: &mut State,
        s: &Stmt,
        target: &Expr,
        field: &str,
        receiver: Term,
        value: Term,
    ) -> R<()> {
        let ctx = ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
        let heap = st.heap.clone();
        let resource = Resource::Field(field.to_string());
        let args = [receiver];
        let found = self.find(&heap, &resource, &args, target.span)?;
        let writable = match found {
            Some(i) => {
                let held = resources::amount_at(&heap, i).at_least(&Permission::write());
                self.prove(held, s.span)?
            }
            None => false,
        };
        if let (Some(i), true) = (found, writable) {
            resources::set_snapshot_at(&mut st.heap, i, value);
            return Ok(());
        }
        let full = |p: &Permission| p.at_least(&Permission::write());
        let total = resources::perm_of(&heap, &resource, &args);
        let likely = self.likely_holder(&heap, &resource, &args[0], &args, full, s.span)?;
        if likely.is_some() || self.prove(full(&total), s.span)? {
            resources::write(&mut st.heap, &resource, &args, &value);
            return Ok(());
        }
        if self.dead_path(s.span)? {
            return Ok(());
        }
        self.report(&ctx, Reason::InsufficientPermission, target);
        Err(Abort::Failed)
    }
}
