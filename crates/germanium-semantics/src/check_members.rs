//! Checking members in Viper's order: domain axioms, functions, predicates, methods, ADTs.

use germanium_syntax::ast::*;

use crate::check_expr::{contains_perm_or_forperm, Expect};
use crate::checker::{Checker, MemberKind};
use crate::types::Type;

impl Checker {
    pub fn check_members(&mut self, program: &Program) {
        for item in &program.items {
            if let ItemKind::Domain(d) = &item.kind {
                for a in &d.axioms {
                    self.begin_member(MemberKind::Axiom);
                    self.type_params = d.type_params.iter().map(|t| t.name.clone()).collect();
                    self.axiom_domain = Some(d.name.name.clone());
                    self.check_top(&a.body, Expect::Assertion);
                    self.axiom_domain = None;
                    self.end_member();
                }
            }
        }
        for item in &program.items {
            if let ItemKind::Function(f) = &item.kind {
                self.check_function(f);
            }
        }
        for item in &program.items {
            if let ItemKind::Predicate(p) = &item.kind {
                let params = self
                    .sem
                    .predicates
                    .get(&p.name.name)
                    .map(|i| i.params.clone())
                    .unwrap_or_default();
                self.enter_params(MemberKind::Predicate, &params);
                if let Some(b) = &p.body {
                    let t = self.check_top(b, Expect::Assertion);
                    if !t.has_error() && !self.wands_in_predicates && contains_wand(b) {
                        self.type_error(b.span, "magic wands are not allowed in predicate bodies");
                    }
                }
                self.end_member();
            }
        }
        for item in &program.items {
            if let ItemKind::Method(m) = &item.kind {
                self.check_method(m);
            }
        }
        for item in &program.items {
            if let ItemKind::Adt(a) = &item.kind {
                self.check_derives(a);
            }
        }
    }

    fn check_function(&mut self, f: &Function) {
        let Some(info) = self.sem.functions.get(&f.name.name).cloned() else {
            return;
        };
        self.enter_params(MemberKind::Function, &info.params);
        self.result_type = Some(info.result.clone());
        for pre in &f.contract.requires {
            self.check_top(pre, Expect::Assertion);
            self.spec_restrictions(pre, true);
        }
        self.check_decreases(&f.contract.decreases);
        self.result_allowed = true;
        for post in &f.contract.ensures {
            let t = self.check_top(post, Expect::Assertion);
            if matches!(t, Type::Impure | Type::Wand) {
                self.type_error(post.span, "function postconditions must be pure");
            } else if !t.has_error() && contains_perm_or_forperm(post) {
                self.type_error(
                    post.span,
                    "perm and forperm are not allowed in function postconditions",
                );
            }
        }
        self.result_allowed = false;
        if let Some(body) = &f.body {
            if !info.result.has_error() {
                self.check_top(body, Expect::Value(info.result.clone()));
            } else {
                self.check_top(body, Expect::Any);
            }
        }
        self.end_member();
    }

    fn check_method(&mut self, m: &Method) {
        let Some(info) = self.sem.methods.get(&m.name.name).cloned() else {
            return;
        };
        let mut vars = info.params.clone();
        vars.extend(info.returns.iter().copied());
        self.enter_params(MemberKind::Method, &vars);
        for pre in &m.contract.requires {
            self.check_top(pre, Expect::Assertion);
            self.spec_restrictions(pre, false);
        }
        for post in &m.contract.ensures {
            self.check_top(post, Expect::Assertion);
            self.spec_restrictions(post, false);
        }
        self.check_decreases(&m.contract.decreases);
        if let Some(b) = &m.body {
            self.check_block_spec_aware(b);
        }
        self.end_member();
    }

    /// Method bodies: loop invariants follow the same permission-introspection rule as
    /// pre- and postconditions.
    fn check_block_spec_aware(&mut self, b: &Block) {
        self.check_block(b);
        let mut invs: Vec<&Expr> = Vec::new();
        crate::visit::walk_stmts(b, &mut |s| {
            if let StmtKind::While { invariants, .. } = &s.kind {
                invs.extend(invariants.iter());
            }
        });
        for i in invs {
            self.spec_restrictions(i, false);
        }
    }

    /// In contracts and invariants, `perm` and `forperm` may only occur inside an
    /// inhale-exhale assertion; function preconditions may not contain magic wands.
    fn spec_restrictions(&mut self, e: &Expr, function_pre: bool) {
        if e_has_error(self, e) {
            return;
        }
        if let Some(span) = perm_outside_inhale_exhale(e) {
            let _ = span;
            self.type_error(
                e.span,
                "perm and forperm may only be used in the inhale or exhale part of a specification",
            );
        }
        if function_pre && contains_wand(e) {
            self.type_error(
                e.span,
                "magic wands are not allowed in function preconditions",
            );
        }
    }

    fn check_derives(&mut self, a: &Adt) {
        let ctors: Vec<&AdtConstructor> = a.constructors.iter().collect();
        for d in &a.derives {
            for w in &d.without {
                let is_destructor = ctors
                    .iter()
                    .any(|c| c.fields.iter().any(|f| f.name.name == w.name));
                if !is_destructor {
                    self.type_error(
                        d.span,
                        format!("{} is not a destructor of {}", w.name, a.name.name),
                    );
                }
            }
        }
    }
}

fn e_has_error(c: &Checker, e: &Expr) -> bool {
    c.sem.type_of(e.id).is_none_or(Type::has_error)
}

/// The first `perm`/`forperm` not under an inhale-exhale expression.
fn perm_outside_inhale_exhale(e: &Expr) -> Option<germanium_syntax::Span> {
    match &e.kind {
        ExprKind::InhaleExhale(..) => None,
        ExprKind::Perm(_) | ExprKind::Forperm { .. } => Some(e.span),
        _ => crate::visit::children(e)
            .into_iter()
            .find_map(perm_outside_inhale_exhale),
    }
}

/// A magic wand other than the one named by an `applying`.
fn contains_wand(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary(BinaryOp::Wand, _, _) => true,
        ExprKind::Applying(_, body) => contains_wand(body),
        _ => crate::visit::children(e).into_iter().any(contains_wand),
    }
}
