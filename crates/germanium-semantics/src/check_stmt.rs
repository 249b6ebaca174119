//! Typing of statements: assignments, method calls, allocation, control flow and the
//! specification statements.

use std::collections::HashSet;

use germanium_syntax::ast::*;

use crate::check_expr::Expect;
use crate::checker::{Checker, Global};
use crate::semantics::{CallTarget, FieldTarget, Semantics, VarKind};
use crate::types::Type;

impl Checker {
    pub fn check_block(&mut self, b: &Block) {
        self.push_scope();
        for s in &b.stmts {
            self.check_stmt(s);
        }
        self.pop_scope();
    }

    fn assertion(&mut self, e: &Expr) {
        self.check_top(e, Expect::Assertion);
    }

    pub fn check_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::VarDecl(vars, init) => {
                let mut targets = Vec::new();
                for (i, v) in vars.iter().enumerate() {
                    let ty = self.resolve_type(&v.ty);
                    let id = self.declare(&v.name.name, v.name.span, ty.clone(), VarKind::Local);
                    self.sem.binders.insert((s.id, i), id);
                    targets.push(ty);
                }
                // As in Viper, `var x: T := e` is a declaration followed by an assignment.
                if let Some(init) = init {
                    if let Some((name, args)) = self.method_call(init) {
                        self.method_call_types(s, init.id, name, args, &targets, &[]);
                    } else if vars.len() != 1 {
                        self.type_error(s.span, "wrong number of targets");
                        self.check_top(init, Expect::Any);
                    } else {
                        self.check_top(init, Expect::Value(targets[0].clone()));
                    }
                }
            }
            StmtKind::Assign(targets, rhs) => {
                if let Some((name, args)) = self.method_call(rhs) {
                    let mut types = Vec::new();
                    for t in targets {
                        types.push(self.assign_target(s, t));
                    }
                    self.method_call_types(s, rhs.id, name, args, &types, targets);
                    self.duplicate_field_targets(s, targets);
                    return;
                }
                if targets.len() != 1 {
                    for t in targets {
                        self.assign_target(s, t);
                    }
                    self.type_error(s.span, "wrong number of targets");
                    self.check_top(rhs, Expect::Any);
                    return;
                }
                let ty = self.assign_target(s, &targets[0]);
                if ty.has_error() {
                    self.check_top(rhs, Expect::Any);
                } else {
                    self.check_top(rhs, Expect::Value(ty));
                }
            }
            StmtKind::Call(name, args) => match self.globals.get(&name.name) {
                Some(Global::Method) => {
                    self.method_call_types(s, s.id, name, args, &[], &[]);
                }
                None => {
                    for a in args {
                        self.check_top(a, Expect::Any);
                    }
                    self.name_error(name.span, format!("identifier {} not defined.", name.name));
                }
                Some(_) => {
                    for a in args {
                        self.check_top(a, Expect::Any);
                    }
                    self.type_error(s.span, "expected a method");
                }
            },
            StmtKind::New(target, fields) => {
                let ty = self.assign_target(s, target);
                if !ty.has_error() && ty != Type::Ref {
                    self.type_error(s.span, format!("expected type Ref, but found {ty}"));
                }
                if let NewFields::Fields(fs) = fields {
                    for f in fs {
                        if self.lookup_local(&f.name).is_some() {
                            self.type_error(s.span, "expected a field as argument");
                            continue;
                        }
                        match self.globals.get(&f.name) {
                            Some(Global::Field) => {}
                            None => self
                                .name_error(f.span, format!("identifier {} not defined.", f.name)),
                            Some(_) => self.type_error(s.span, "expected a field as argument"),
                        }
                    }
                }
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.check_top(cond, Expect::Value(Type::Bool));
                self.check_block(then);
                if let Some(o) = otherwise {
                    self.check_block(o);
                }
            }
            StmtKind::While {
                cond,
                invariants,
                decreases,
                body,
            } => {
                self.check_top(cond, Expect::Value(Type::Bool));
                for i in invariants {
                    self.assertion(i);
                }
                self.check_decreases(decreases);
                self.check_block(body);
            }
            StmtKind::Label(_, invs) => {
                for i in invs {
                    self.assertion(i);
                }
            }
            StmtKind::Goto(_) | StmtKind::Define(_) => {}
            StmtKind::Fold(e) => {
                let t = self.check_top(e, Expect::Assertion);
                if !t.has_error() {
                    self.expect_predicate_access(e, "abstract predicates cannot be folded");
                }
            }
            StmtKind::Unfold(e) => {
                let t = self.check_top(e, Expect::Assertion);
                if !t.has_error() {
                    self.expect_predicate_access(e, "abstract predicates cannot be unfolded");
                }
            }
            StmtKind::Package(e, script) => {
                let t = self.check_top(e, Expect::Assertion);
                if !t.has_error() && !matches!(e.kind, ExprKind::Binary(BinaryOp::Wand, _, _)) {
                    self.type_error(e.span, "expected magic wand");
                }
                if let Some(b) = script {
                    self.check_block(b);
                }
            }
            StmtKind::Apply(e) => {
                let t = self.check_top(e, Expect::Assertion);
                if !t.has_error() && !matches!(e.kind, ExprKind::Binary(BinaryOp::Wand, _, _)) {
                    self.type_error(e.span, "expected magic wand");
                }
            }
            StmtKind::Inhale(e)
            | StmtKind::Exhale(e)
            | StmtKind::Assert(e)
            | StmtKind::Assume(e)
            | StmtKind::Refute(e) => self.assertion(e),
            StmtKind::Quasihavoc(cond, res) => {
                if let Some(c) = cond {
                    self.check_top(c, Expect::Value(Type::Bool));
                }
                self.havoc_resource(res);
            }
            StmtKind::Quasihavocall(vars, cond, res) => {
                self.push_scope();
                for (i, v) in vars.iter().enumerate() {
                    let ty = self.resolve_type(&v.ty);
                    let id = self.declare(&v.name.name, v.name.span, ty, VarKind::Bound);
                    self.sem.binders.insert((s.id, i), id);
                }
                if let Some(c) = cond {
                    self.check_top(c, Expect::Value(Type::Bool));
                }
                self.havoc_resource(res);
                self.pop_scope();
            }
            StmtKind::Block(b) => self.check_block(b),
            StmtKind::MacroRef(name) => {
                self.type_error(s.span, format!("unknown macro used: {}", name.name));
            }
        }
    }

    fn havoc_resource(&mut self, res: &Expr) {
        self.begin_top();
        let t = self.expr(res);
        if !t.has_error() {
            self.expect_location(res, true);
        }
        self.end_top();
    }

    pub fn check_decreases(&mut self, ds: &[Decreases]) {
        for d in ds {
            if let DecreasesKind::Tuple(es) = &d.kind {
                for e in es {
                    self.check_top(e, Expect::Any);
                }
            }
            if let Some(c) = &d.condition {
                self.check_top(c, Expect::Value(Type::Bool));
            }
        }
    }

    /// `m(args)` where `m` is a method.
    fn method_call<'a>(&self, e: &'a Expr) -> Option<(&'a Ident, &'a [Expr])> {
        match &e.kind {
            ExprKind::Call(name, args)
                if matches!(self.globals.get(&name.name), Some(Global::Method)) =>
            {
                Some((name, args))
            }
            _ => None,
        }
    }

    /// Arguments and targets of a method call (`node` is where the resolution is recorded).
    fn method_call_types(
        &mut self,
        s: &Stmt,
        node: NodeId,
        name: &Ident,
        args: &[Expr],
        targets: &[Type],
        target_exprs: &[Expr],
    ) {
        let _ = target_exprs;
        let Some(info) = self.sem.methods.get(&name.name).cloned() else {
            return;
        };
        Semantics::set(
            &mut self.sem.calls,
            node,
            CallTarget::Method(name.name.clone()),
        );
        let params = self.param_types(&info.params);
        let returns = self.param_types(&info.returns);
        if params.len() != args.len() {
            for a in args {
                self.check_top(a, Expect::Any);
            }
            self.type_error(s.span, "wrong number of arguments");
            return;
        }
        if returns.len() != targets.len() {
            for a in args {
                self.check_top(a, Expect::Any);
            }
            self.type_error(s.span, "wrong number of targets");
            return;
        }
        for (a, p) in args.iter().zip(&params) {
            self.check_top(a, Expect::Value(p.clone()));
        }
        for (t, r) in targets.iter().zip(&returns) {
            if !t.has_error() && !r.has_error() && t != r {
                self.type_error(s.span, format!("Expected type {r}, but found {t}"));
            }
        }
    }

    /// Checks an assignment target; returns its type (error type if it is not assignable).
    fn assign_target(&mut self, s: &Stmt, t: &Expr) -> Type {
        match &t.kind {
            ExprKind::Ident(id) => {
                let Some(v) = self.lookup_local(&id.name) else {
                    if self.globals.contains_key(&id.name) {
                        self.type_error(s.span, "expected variable as lhs");
                    } else {
                        self.name_error(id.span, format!("identifier {} not defined.", id.name));
                    }
                    return Type::Error;
                };
                if self.is_ambiguous(&id.name) {
                    self.name_error(id.span, format!("identifier {} is ambiguous", id.name));
                    return Type::Error;
                }
                Semantics::set(&mut self.sem.idents, t.id, v);
                let info = self.sem.var(v).clone();
                Semantics::set(&mut self.sem.expr_types, t.id, info.ty.clone());
                match info.kind {
                    VarKind::Local | VarKind::Return => info.ty,
                    _ => {
                        self.type_error(s.span, "expected variable as lhs");
                        Type::Error
                    }
                }
            }
            ExprKind::FieldAccess(_, f) => {
                self.begin_top();
                let ty = self.expr(t);
                self.end_top();
                if ty.has_error() {
                    return Type::Error;
                }
                match self.sem.field_access(t.id) {
                    Some(FieldTarget::Field(_)) => ty,
                    _ => {
                        self.type_error(f.span, "expected a field as lhs");
                        Type::Error
                    }
                }
            }
            _ => {
                self.check_top(t, Expect::Any);
                self.type_error(s.span, "expected variable or field as lhs");
                Type::Error
            }
        }
    }

    /// `a.n, a.n := m()` assigns one location twice.
    fn duplicate_field_targets(&mut self, s: &Stmt, targets: &[Expr]) {
        let mut seen = HashSet::new();
        for t in targets {
            if let ExprKind::FieldAccess(rcv, f) = &t.kind {
                if let ExprKind::Ident(r) = &rcv.kind {
                    if !seen.insert((r.name.clone(), f.name.clone())) {
                        self.type_error(s.span, "duplicate field assignment targets");
                    }
                }
            }
        }
    }
}
