//! Typing of expressions: name resolution of identifiers, calls and field accesses,
//! operator signatures, and inference of type arguments by unification.

use germanium_syntax::ast::*;

use crate::checker::{Checker, Global, MemberKind};
use crate::semantics::{CallTarget, FieldTarget, VarKind};
use crate::types::{Type, VarClass};

/// How an expression's type must relate to the context.
#[derive(Clone, Debug)]
pub(crate) enum Expect {
    /// Any type.
    Any,
    /// A pure value of this type.
    Value(Type),
    /// An assertion: Bool, an impure assertion or a wand.
    Assertion,
}

impl Checker {
    /// Checks a top-level expression against what the context expects; reports a mismatch
    /// at the expression.
    pub fn check_top(&mut self, e: &Expr, expect: Expect) -> Type {
        self.begin_top();
        let t = self.expr(e);
        let t = self.expect_at(e, &t, &expect);
        self.end_top();
        t
    }

    /// Checks `t` (the type of `e`) against `expect`, reporting at `e`.
    pub(crate) fn expect_at(&mut self, e: &Expr, t: &Type, expect: &Expect) -> Type {
        match expect {
            Expect::Any => t.clone(),
            Expect::Assertion => {
                let s = self.unifier.shallow(t);
                if s.is_assertion() || self.unifier.try_unify(&Type::Bool, &s) {
                    s
                } else {
                    self.mismatch(e, &Type::Bool, &s);
                    Type::Error
                }
            }
            Expect::Value(want) => {
                let s = self.unifier.shallow(t);
                if matches!(s, Type::Impure | Type::Wand) && *want == Type::Bool {
                    self.type_error(e.span, "expected a pure boolean expression, but found an assertion with permissions");
                    return Type::Error;
                }
                if self.unifier.try_unify(want, &s) {
                    self.unifier.resolve(want)
                } else {
                    self.mismatch(e, want, &s);
                    Type::Error
                }
            }
        }
    }

    fn mismatch(&mut self, e: &Expr, want: &Type, found: &Type) {
        let want = self.unifier.resolve(want);
        let found = self.unifier.resolve(found);
        self.type_error(e.span, format!("Expected type {want}, but found {found}"));
    }

    /// Checks a sub-expression that must be a pure value of type `want`.
    fn sub(&mut self, e: &Expr, want: &Type) -> Type {
        let t = self.expr(e);
        if t == Type::Error {
            return Type::Error;
        }
        self.expect_at(e, &t, &Expect::Value(want.clone()))
    }

    /// Checks a sub-expression that must be an assertion (Bool, impure or wand).
    fn sub_assertion(&mut self, e: &Expr) -> Type {
        let t = self.expr(e);
        self.expect_at(e, &t, &Expect::Assertion)
    }

    fn impure_value(&mut self, e: &Expr, t: &Type) -> bool {
        if matches!(self.unifier.shallow(t), Type::Impure | Type::Wand) {
            self.type_error(
                e.span,
                "expected a pure expression, but found an assertion with permissions",
            );
            true
        } else {
            false
        }
    }

    /// The type of an expression; records it and all resolutions.
    pub fn expr(&mut self, e: &Expr) -> Type {
        let t = self.expr_inner(e);
        self.record_type(e.id, &t);
        t
    }

    fn expr_inner(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::IntLit(_) => Type::Int,
            ExprKind::BoolLit(_) => Type::Bool,
            ExprKind::Null => Type::Ref,
            ExprKind::Result => {
                if self.result_allowed {
                    self.result_type.clone().unwrap_or(Type::Error)
                } else {
                    self.type_error(
                        e.span,
                        "'result' can only be used in function postconditions",
                    );
                    Type::Error
                }
            }
            ExprKind::Ident(id) => self.ident(e, id),
            ExprKind::Unary(op, a) => {
                let t = self.expr(a);
                let order = self.next_numeric_order();
                if t.has_error() {
                    return Type::Error;
                }
                match op {
                    UnaryOp::Not => {
                        let t = self.expect_at(a, &t, &Expect::Assertion);
                        if matches!(t, Type::Impure | Type::Wand) {
                            Type::Impure
                        } else {
                            Type::Bool
                        }
                    }
                    UnaryOp::Neg => self.numeric_negation(e, order, &t),
                }
            }
            ExprKind::Binary(op, l, r) => self.binary(e, *op, l, r),
            ExprKind::Cond(c, a, b) => {
                let tc = self.expr(c);
                let ta = self.expr(a);
                let tb = self.expr(b);
                if tc.has_error() || ta.has_error() || tb.has_error() {
                    return Type::Error;
                }
                if self.impure_value(c, &tc) {
                    return Type::Error;
                }
                if self.expect_at(c, &tc, &Expect::Value(Type::Bool)) == Type::Error {
                    return Type::Error;
                }
                let sa = self.unifier.shallow(&ta);
                let sb = self.unifier.shallow(&tb);
                let impure = |t: &Type| matches!(t, Type::Impure | Type::Wand);
                if impure(&sa) || impure(&sb) {
                    let ok_a = sa.is_assertion() || self.unifier.try_unify(&Type::Bool, &sa);
                    let ok_b = sb.is_assertion() || self.unifier.try_unify(&Type::Bool, &sb);
                    if ok_a && ok_b {
                        return Type::Impure;
                    }
                    self.type_error(e.span, "Type error in the conditional expression");
                    return Type::Error;
                }
                if self.unifier.try_unify(&ta, &tb) {
                    ta
                } else {
                    self.type_error(e.span, "Type error in the conditional expression");
                    Type::Error
                }
            }
            ExprKind::FieldAccess(rcv, f) => self.field_access(e, rcv, f),
            ExprKind::Call(name, args) => self.call(e, name, args),
            ExprKind::Ascribed(inner, ty) => {
                let want = self.resolve_type(ty);
                let t = self.expr(inner);
                if t.has_error() || want.has_error() {
                    return Type::Error;
                }
                if self.unifier.try_unify(&want, &t) {
                    want
                } else {
                    self.mismatch(inner, &want, &t);
                    Type::Error
                }
            }
            ExprKind::Old(_, inner) | ExprKind::Lhs(inner) => {
                let t = self.expr(inner);
                if t.has_error() || self.impure_value(inner, &t) {
                    return Type::Error;
                }
                t
            }
            ExprKind::Let(x, val, body) => {
                let tv = self.expr(val);
                self.push_scope();
                let v = self.declare(&x.name, x.span, tv.clone(), VarKind::Let);
                self.sem.binders.insert((e.id, 0), v);
                let tb = self.expr(body);
                self.pop_scope();
                // The variable's type may still contain inference variables: fix it later.
                self.pending_let_types.push((v, tv));
                tb
            }
            ExprKind::Unfolding(acc, body) => {
                let ta = self.expr(acc);
                let tb = self.expr(body);
                if ta.has_error() {
                    return tb;
                }
                self.expect_predicate_access(acc, "abstract predicates cannot be unfolded");
                tb
            }
            ExprKind::Applying(wand, body) => {
                let tw = self.expr(wand);
                let tb = self.expr(body);
                if !tw.has_error() && !matches!(wand.kind, ExprKind::Binary(BinaryOp::Wand, _, _)) {
                    self.type_error(wand.span, "expected magic wand");
                }
                if self.member == MemberKind::Predicate {
                    self.type_error(
                        e.span,
                        "applying expressions are not allowed in predicate bodies",
                    );
                }
                tb
            }
            ExprKind::Asserting(a, body) => {
                self.sub_assertion(a);
                self.expr(body)
            }
            ExprKind::Quantifier {
                kind,
                vars,
                triggers,
                body,
            } => {
                self.push_scope();
                for (i, v) in vars.iter().enumerate() {
                    let ty = self.resolve_type(&v.ty);
                    let id = self.declare(&v.name.name, v.name.span, ty, VarKind::Bound);
                    self.sem.binders.insert((e.id, i), id);
                }
                let tb = self.sub_assertion(body);
                for t in triggers {
                    for te in &t.exprs {
                        let tt = self.expr(te);
                        if !tt.has_error() && !self.valid_trigger(te) {
                            self.type_error(te.span, "invalid trigger expression");
                        }
                    }
                }
                self.pop_scope();
                match (kind, tb) {
                    (_, Type::Error) => Type::Error,
                    (_, Type::Impure | Type::Wand) => Type::Impure,
                    _ => Type::Bool,
                }
            }
            ExprKind::Forperm {
                vars,
                resources,
                body,
            } => self.forperm(e, vars, resources, body),
            ExprKind::Acc(loc, amount) => {
                let tl = self.expr(loc);
                if let Some(a) = amount {
                    self.sub(a, &Type::Perm);
                }
                if !tl.has_error() {
                    self.expect_location(loc, true);
                }
                Type::Impure
            }
            ExprKind::Perm(loc) => {
                let tl = self.expr(loc);
                if !tl.has_error() {
                    self.expect_location(loc, true);
                }
                Type::Perm
            }
            ExprKind::Write | ExprKind::NoPerm | ExprKind::Wildcard | ExprKind::Epsilon => {
                Type::Perm
            }
            ExprKind::ReadPerm(k) => {
                match k {
                    ReadPermKind::Rdc(n) => {
                        self.sub(n, &Type::Int);
                    }
                    ReadPermKind::RdToken(t) | ReadPermKind::RdTokenFresh(t) => {
                        self.expr(t);
                    }
                    _ => {}
                }
                Type::Perm
            }
            ExprKind::Collection(kind, ty, elems) => {
                let elem = match ty {
                    Some(t) => self.resolve_type(t),
                    None => self.unifier.fresh(VarClass::Any),
                };
                let mut bad = elem.has_error();
                for x in elems {
                    let t = self.expr(x);
                    if t.has_error() || self.impure_value(x, &t) {
                        bad = true;
                    } else if !bad && !self.unifier.try_unify(&elem, &t) {
                        self.type_error(e.span, "Type error in the collection literal");
                        bad = true;
                    }
                }
                if bad {
                    return Type::Error;
                }
                match kind {
                    CollectionKind::Seq => Type::seq(elem),
                    CollectionKind::Set => Type::set(elem),
                    CollectionKind::Multiset => Type::multiset(elem),
                }
            }
            ExprKind::MapLit(tys, pairs) => {
                let (k, v) = match tys {
                    Some((k, v)) => (self.resolve_type(k), self.resolve_type(v)),
                    None => (
                        self.unifier.fresh(VarClass::Any),
                        self.unifier.fresh(VarClass::Any),
                    ),
                };
                let mut bad = k.has_error() || v.has_error();
                for (a, b) in pairs {
                    let ta = self.expr(a);
                    let tb = self.expr(b);
                    if ta.has_error() || tb.has_error() {
                        bad = true;
                    } else if !bad {
                        let fits =
                            self.unifier.try_unify(&k, &ta) && self.unifier.try_unify(&v, &tb);
                        if !fits {
                            self.type_error(e.span, "Type error in the map literal");
                            bad = true;
                        }
                    }
                }
                if bad {
                    Type::Error
                } else {
                    Type::map(k, v)
                }
            }
            ExprKind::Range(a, b) => {
                let ta = self.sub(a, &Type::Int);
                let tb = self.sub(b, &Type::Int);
                if ta.has_error() || tb.has_error() {
                    Type::Error
                } else {
                    Type::seq(Type::Int)
                }
            }
            ExprKind::Index(s, i) => {
                let ts = self.expr(s);
                let ti = self.expr(i);
                if ts.has_error() || ti.has_error() || self.impure_value(i, &ti) {
                    return Type::Error;
                }
                match self.unifier.shallow(&ts) {
                    Type::Seq(el) => self.operand(e, &ti, &Type::Int, *el),
                    Type::Map(k, v) => self.operand(e, &ti, &k, *v),
                    _ => self.op_error(e),
                }
            }
            ExprKind::Slice(s, a, b) => {
                let ts = self.expr(s);
                let mut bad = ts.has_error();
                for x in [a, b].into_iter().flatten() {
                    bad |= self.sub(x, &Type::Int).has_error();
                }
                if bad {
                    return Type::Error;
                }
                match self.unifier.shallow(&ts) {
                    Type::Seq(_) => ts,
                    _ => self.op_error(e),
                }
            }
            ExprKind::Update(s, i, v) => {
                let ts = self.expr(s);
                let ti = self.expr(i);
                let tv = self.expr(v);
                if ts.has_error() || ti.has_error() || tv.has_error() {
                    return Type::Error;
                }
                match self.unifier.shallow(&ts) {
                    Type::Seq(el) => {
                        if self.unifier.try_unify(&Type::Int, &ti)
                            && self.unifier.try_unify(&el, &tv)
                        {
                            ts
                        } else {
                            self.op_error(e)
                        }
                    }
                    Type::Map(k, val) => {
                        if self.unifier.try_unify(&k, &ti) && self.unifier.try_unify(&val, &tv) {
                            ts
                        } else {
                            self.op_error(e)
                        }
                    }
                    _ => self.op_error(e),
                }
            }
            ExprKind::Length(s) => {
                let ts = self.expr(s);
                if ts.has_error() {
                    return Type::Error;
                }
                match self.unifier.shallow(&ts) {
                    Type::Seq(_) | Type::Set(_) | Type::Multiset(_) | Type::Map(_, _) => Type::Int,
                    _ => self.op_error(e),
                }
            }
            ExprKind::MapDomain(m) | ExprKind::MapRange(m) => {
                let tm = self.expr(m);
                if tm.has_error() {
                    return Type::Error;
                }
                match self.unifier.shallow(&tm) {
                    Type::Map(k, v) => {
                        if matches!(e.kind, ExprKind::MapDomain(_)) {
                            Type::Set(k)
                        } else {
                            Type::Set(v)
                        }
                    }
                    _ => self.op_error(e),
                }
            }
            ExprKind::InhaleExhale(a, b) => {
                let ta = self.sub_assertion(a);
                let tb = self.sub_assertion(b);
                let impure = |t: &Type| matches!(t, Type::Impure | Type::Wand);
                if ta.has_error() || tb.has_error() {
                    Type::Error
                } else if impure(&ta) || impure(&tb) {
                    Type::Impure
                } else {
                    Type::Bool
                }
            }
            ExprKind::Annotated(_, inner) => self.expr(inner),
        }
    }

    fn op_error(&mut self, e: &Expr) -> Type {
        self.type_error(e.span, "Type error in the expression");
        Type::Error
    }

    /// `found` must unify with `want`; the result is `result`.
    fn operand(&mut self, e: &Expr, found: &Type, want: &Type, result: Type) -> Type {
        if self.unifier.try_unify(want, found) {
            result
        } else {
            self.op_error(e)
        }
    }

    fn ident(&mut self, e: &Expr, id: &Ident) -> Type {
        if let Some(v) = self.lookup_local(&id.name) {
            if self.is_ambiguous(&id.name) {
                self.name_error(id.span, format!("identifier {} is ambiguous", id.name));
                return Type::Error;
            }
            self.record_ident(e.id, v);
            return self.sem.var(v).ty.clone();
        }
        match self.globals.get(&id.name) {
            None => {
                self.name_error(id.span, format!("identifier {} not defined.", id.name));
                Type::Error
            }
            Some(_) => {
                self.type_error(id.span, format!("expected identifier, but got {}", id.name));
                Type::Error
            }
        }
    }

    fn binary(&mut self, e: &Expr, op: BinaryOp, l: &Expr, r: &Expr) -> Type {
        use BinaryOp::*;
        let tl = self.expr(l);
        let tr = self.expr(r);
        let order = self.next_numeric_order();
        if tl.has_error() || tr.has_error() {
            return Type::Error;
        }
        match op {
            And | Or | Iff | Implies | Wand => {
                // The left side of an implication and both sides of `<==>` are values in
                // Viper; impure uses of `||`, `<==>` and `!` are a consistency matter.
                if op == Implies && self.impure_value(l, &tl) {
                    return Type::Error;
                }
                let a = self.expect_at(l, &tl, &Expect::Assertion);
                let b = self.expect_at(r, &tr, &Expect::Assertion);
                if a == Type::Error || b == Type::Error {
                    return Type::Error;
                }
                if op == Wand {
                    return Type::Wand;
                }
                let impure = |t: &Type| matches!(t, Type::Impure | Type::Wand);
                if impure(&a) || impure(&b) {
                    Type::Impure
                } else {
                    Type::Bool
                }
            }
            Eq | Ne => {
                if self.impure_value(l, &tl) || self.impure_value(r, &tr) {
                    return Type::Error;
                }
                self.operand(e, &tr, &tl, Type::Bool)
            }
            Lt | Le | Gt | Ge => {
                if self.impure_value(l, &tl) || self.impure_value(r, &tr) {
                    return Type::Error;
                }
                self.numeric_binary(e, order, op, &tl, &tr)
            }
            Add | Sub | Mul | Div => self.numeric_binary(e, order, op, &tl, &tr),
            IntDiv | Mod => {
                if self.unifier.try_unify(&Type::Int, &tl)
                    && self.unifier.try_unify(&Type::Int, &tr)
                {
                    Type::Int
                } else {
                    self.op_error(e)
                }
            }
            In => match self.unifier.shallow(&tr) {
                Type::Seq(el) | Type::Set(el) => self.operand(e, &tl, &el, Type::Bool),
                Type::Multiset(el) => self.operand(e, &tl, &el, Type::Int),
                Type::Map(k, _) => self.operand(e, &tl, &k, Type::Bool),
                _ => self.op_error(e),
            },
            Concat => match self.unifier.shallow(&tl) {
                Type::Seq(_) => self.operand(e, &tr, &tl, tl.clone()),
                _ => self.op_error(e),
            },
            Union | Intersection | Setminus => match self.unifier.shallow(&tl) {
                Type::Set(_) | Type::Multiset(_) => self.operand(e, &tr, &tl, tl.clone()),
                _ => self.op_error(e),
            },
            Subset => match self.unifier.shallow(&tl) {
                Type::Set(_) | Type::Multiset(_) => self.operand(e, &tr, &tl, Type::Bool),
                _ => self.op_error(e),
            },
        }
    }

    fn field_access(&mut self, e: &Expr, rcv: &Expr, f: &Ident) -> Type {
        let tr = self.expr(rcv);
        let mut global = self.globals.get(&f.name).cloned();
        if global.is_none() {
            if let Some(cands) = self.destructors.get(&f.name) {
                // Pick the ADT by the receiver's type (the only one if there is one).
                let pick = match self.unifier.shallow(&tr) {
                    Type::Adt(n, _) => cands.iter().find(|(a, _)| *a == n).or(cands.first()),
                    _ => cands.first(),
                };
                global = pick.map(|(a, c)| Global::Destructor(a.clone(), c.clone()));
            }
        }
        let is_discriminator = matches!(global, Some(Global::Discriminator(..)));
        match global {
            None => {
                self.name_error(f.span, format!("identifier {} not defined.", f.name));
                Type::Error
            }
            Some(Global::Field) => {
                if tr.has_error() {
                    return Type::Error;
                }
                let ty = self
                    .sem
                    .fields
                    .get(&f.name)
                    .map(|i| i.ty.clone())
                    .unwrap_or(Type::Error);
                if !self.unifier.try_unify(&Type::Ref, &tr) {
                    self.type_error(
                        e.span,
                        format!("expected a reference as receiver of field {}", f.name),
                    );
                    return Type::Error;
                }
                self.record_field(e.id, FieldTarget::Field(f.name.clone()));
                ty
            }
            Some(Global::Destructor(adt, ctor)) | Some(Global::Discriminator(adt, ctor)) => {
                if tr.has_error() {
                    return Type::Error;
                }
                let params = self
                    .sem
                    .adts
                    .get(&adt)
                    .map(|a| a.type_params.clone())
                    .unwrap_or_default();
                let args: Vec<Type> = params
                    .iter()
                    .map(|_| self.unifier.fresh(VarClass::Any))
                    .collect();
                if !self
                    .unifier
                    .try_unify(&Type::Adt(adt.clone(), args.clone()), &tr)
                {
                    self.type_error(
                        e.span,
                        format!(
                            "expected an expression of type {adt} as receiver of {}",
                            f.name
                        ),
                    );
                    return Type::Error;
                }
                if is_discriminator {
                    self.record_field(
                        e.id,
                        FieldTarget::AdtDiscriminator {
                            adt,
                            constructor: ctor,
                            type_args: args,
                        },
                    );
                    return Type::Bool;
                }
                let ty = self
                    .sem
                    .constructors
                    .get(&ctor)
                    .and_then(|c| {
                        c.fields
                            .iter()
                            .find(|(n, _)| n == &f.name)
                            .map(|(_, t)| t.clone())
                    })
                    .unwrap_or(Type::Error);
                let ty = subst_params(&ty, &params, &args);
                self.record_field(
                    e.id,
                    FieldTarget::AdtDestructor {
                        adt,
                        constructor: ctor,
                        destructor: f.name.clone(),
                        type_args: args,
                    },
                );
                ty
            }
            Some(_) => {
                self.type_error(f.span, "expected field");
                Type::Error
            }
        }
    }

    fn call(&mut self, e: &Expr, name: &Ident, args: &[Expr]) -> Type {
        let arg_types: Vec<Type> = args.iter().map(|a| self.expr(a)).collect();
        let global = self.globals.get(&name.name).cloned();
        let Some(global) = global else {
            self.name_error(name.span, format!("identifier {} not defined.", name.name));
            return Type::Error;
        };
        if arg_types.iter().any(Type::has_error) {
            return Type::Error;
        }
        for (a, t) in args.iter().zip(&arg_types) {
            if self.impure_value(a, t) {
                return Type::Error;
            }
        }
        match global {
            Global::Function => {
                let Some(info) = self.sem.functions.get(&name.name).cloned() else {
                    return Type::Error;
                };
                if self.member == MemberKind::Axiom && info.has_pre {
                    self.type_error(name.span, format!("{} is not a domain function", name.name));
                    return Type::Error;
                }
                let params = self.param_types(&info.params);
                if !self.args_match(e, &params, &arg_types) {
                    return Type::Error;
                }
                self.record_call(e.id, CallTarget::Function(name.name.clone()));
                info.result
            }
            Global::DomainFunction => {
                let Some(info) = self.sem.domain_functions.get(&name.name).cloned() else {
                    return Type::Error;
                };
                let tparams = self
                    .sem
                    .domains
                    .get(&info.domain)
                    .map(|d| d.type_params.clone())
                    .unwrap_or_default();
                let fresh: Vec<Type> = tparams
                    .iter()
                    .map(|_| self.unifier.fresh(VarClass::Any))
                    .collect();
                let params: Vec<Type> = info
                    .params
                    .iter()
                    .map(|p| subst_params(p, &tparams, &fresh))
                    .collect();
                if !self.args_match(e, &params, &arg_types) {
                    return Type::Error;
                }
                if self.axiom_domain.as_deref() == Some(info.domain.as_str()) {
                    // In an axiom of the function's own domain, a type argument nothing else
                    // fixes is the domain's type parameter (as in Viper), not Int.
                    for (v, p) in fresh.iter().zip(&tparams) {
                        self.own_domain_defaults
                            .push((v.clone(), Type::Var(p.clone())));
                    }
                }
                self.record_call(
                    e.id,
                    CallTarget::DomainFunction {
                        domain: info.domain.clone(),
                        function: name.name.clone(),
                        type_args: fresh.clone(),
                    },
                );
                subst_params(&info.result, &tparams, &fresh)
            }
            Global::Constructor => {
                let Some(info) = self.sem.constructors.get(&name.name).cloned() else {
                    return Type::Error;
                };
                let tparams = self
                    .sem
                    .adts
                    .get(&info.adt)
                    .map(|d| d.type_params.clone())
                    .unwrap_or_default();
                let fresh: Vec<Type> = tparams
                    .iter()
                    .map(|_| self.unifier.fresh(VarClass::Any))
                    .collect();
                let params: Vec<Type> = info
                    .fields
                    .iter()
                    .map(|(_, p)| subst_params(p, &tparams, &fresh))
                    .collect();
                if !self.args_match(e, &params, &arg_types) {
                    return Type::Error;
                }
                self.record_call(
                    e.id,
                    CallTarget::AdtConstructor {
                        adt: info.adt.clone(),
                        constructor: name.name.clone(),
                        type_args: fresh.clone(),
                    },
                );
                Type::Adt(info.adt, fresh)
            }
            Global::Predicate => {
                let Some(info) = self.sem.predicates.get(&name.name).cloned() else {
                    return Type::Error;
                };
                let params = self.param_types(&info.params);
                if params.len() != args.len() {
                    self.type_error(name.span, "predicate arity doesn't match");
                    return Type::Error;
                }
                if !self.args_match(e, &params, &arg_types) {
                    return Type::Error;
                }
                self.record_call(e.id, CallTarget::Predicate(name.name.clone()));
                Type::Impure
            }
            _ => {
                self.type_error(name.span, "expected function or predicate");
                Type::Error
            }
        }
    }

    /// Arity and argument types of an application (reported at the application).
    fn args_match(&mut self, e: &Expr, params: &[Type], args: &[Type]) -> bool {
        if params.len() != args.len() {
            self.type_error(e.span, "wrong number of arguments");
            return false;
        }
        for (p, a) in params.iter().zip(args) {
            if !self.unifier.try_unify(p, a) {
                self.type_error(e.span, "Type error in the application");
                return false;
            }
        }
        true
    }

    /// `acc`/`perm` operands: a field access, a predicate instance or (if allowed) a wand.
    pub(crate) fn expect_location(&mut self, loc: &Expr, allow_wand: bool) -> bool {
        let ok = match &loc.kind {
            ExprKind::FieldAccess(..) => {
                matches!(self.pending_field_of(loc), Some(FieldTarget::Field(_)))
            }
            ExprKind::Call(name, _) => {
                matches!(self.globals.get(&name.name), Some(Global::Predicate))
            }
            ExprKind::Binary(BinaryOp::Wand, _, _) => allow_wand,
            _ => false,
        };
        if !ok {
            self.type_error(
                loc.span,
                "specified location is not a field nor a predicate",
            );
        }
        ok
    }

    /// `P(args)` or `acc(P(args), p)` with a predicate that has a body.
    pub(crate) fn expect_predicate_access(&mut self, e: &Expr, abstract_msg: &str) {
        let call = match &e.kind {
            ExprKind::Call(name, _) => Some(name),
            ExprKind::Acc(loc, _) => match &loc.kind {
                ExprKind::Call(name, _) => Some(name),
                _ => None,
            },
            _ => None,
        };
        match call {
            Some(name) if matches!(self.globals.get(&name.name), Some(Global::Predicate)) => {
                if self
                    .sem
                    .predicates
                    .get(&name.name)
                    .is_some_and(|p| !p.has_body)
                {
                    self.type_error(name.span, abstract_msg.to_string());
                }
            }
            _ => self.type_error(e.span, "expected predicate access"),
        }
    }

    /// Forms Viper accepts as triggers.
    fn valid_trigger(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call(name, _) => {
                !matches!(self.globals.get(&name.name), Some(Global::Method) | None)
            }
            ExprKind::FieldAccess(..) => !matches!(
                self.pending_field_of(e),
                Some(FieldTarget::AdtDiscriminator { .. }) | None
            ),
            ExprKind::Index(..) | ExprKind::Length(_) => true,
            ExprKind::Binary(BinaryOp::In | BinaryOp::Subset, _, _) => true,
            ExprKind::Old(_, inner)
            | ExprKind::Annotated(_, inner)
            | ExprKind::Ascribed(inner, _) => self.valid_trigger(inner),
            ExprKind::MapDomain(_) | ExprKind::MapRange(_) | ExprKind::Perm(_) => true,
            // Heap-dependent triggers: permissions to fields, predicates and wands.
            ExprKind::Acc(..) | ExprKind::Binary(BinaryOp::Wand, _, _) => true,
            ExprKind::Slice(..) | ExprKind::Update(..) | ExprKind::Range(..) => true,
            _ => false,
        }
    }

    fn forperm(&mut self, e: &Expr, vars: &[VarDecl], resources: &[Expr], body: &Expr) -> Type {
        self.push_scope();
        let mut names = Vec::new();
        for (i, v) in vars.iter().enumerate() {
            let ty = self.resolve_type(&v.ty);
            let id = self.declare(&v.name.name, v.name.span, ty, VarKind::Bound);
            self.sem.binders.insert((e.id, i), id);
            names.push(v.name.name.clone());
        }
        let mut ok = true;
        let mut direct: Vec<String> = Vec::new();
        let mut has_wand = false;
        for r in resources {
            let t = self.expr(r);
            if t.has_error() || !self.expect_location(r, true) {
                ok = false;
                continue;
            }
            // Quantified variables occur only as direct arguments (receivers) of resources.
            let args_ok = match &r.kind {
                ExprKind::FieldAccess(rcv, _) => {
                    ident_name(rcv).is_some_and(|n| names.iter().any(|x| x == n))
                }
                ExprKind::Call(_, args) => args
                    .iter()
                    .all(|a| ident_name(a).is_some() || !mentions_any(a, &names)),
                _ => {
                    has_wand = true;
                    true
                }
            };
            match &r.kind {
                ExprKind::FieldAccess(rcv, _) => direct.extend(ident_name(rcv).map(String::from)),
                ExprKind::Call(_, args) => {
                    direct.extend(args.iter().filter_map(ident_name).map(String::from))
                }
                _ => {}
            }
            if !args_ok {
                self.type_error(
                    e.span,
                    "forperm variables must be direct arguments of its resources",
                );
                ok = false;
            }
        }
        if ok && !has_wand && names.iter().any(|n| !direct.contains(n)) {
            self.type_error(e.span, "every forperm variable must occur in its resources");
            ok = false;
        }
        let tb = self.expr(body);
        if !tb.has_error() {
            if matches!(self.unifier.shallow(&tb), Type::Impure | Type::Wand)
                || contains_perm_or_forperm(body)
            {
                self.type_error(
                    body.span,
                    "forperm bodies must be pure and must not inspect permissions",
                );
                ok = false;
            } else if !self.unifier.try_unify(&Type::Bool, &tb) {
                self.mismatch(body, &Type::Bool, &tb);
                ok = false;
            }
        }
        self.pop_scope();
        if ok {
            Type::Bool
        } else {
            Type::Error
        }
    }
}

fn ident_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(i) => Some(&i.name),
        _ => None,
    }
}

/// Whether `e` mentions one of `names` as an identifier.
pub(crate) fn mentions_any(e: &Expr, names: &[String]) -> bool {
    let mut found = false;
    crate::visit::walk_expr(e, &mut |x| {
        if let ExprKind::Ident(i) = &x.kind {
            if names.iter().any(|n| n == &i.name) {
                found = true;
            }
        }
    });
    found
}

pub(crate) fn contains_perm_or_forperm(e: &Expr) -> bool {
    let mut found = false;
    crate::visit::walk_expr(e, &mut |x| {
        if matches!(x.kind, ExprKind::Perm(_) | ExprKind::Forperm { .. }) {
            found = true;
        }
    });
    found
}

/// Replaces the type parameters `params` by `args` in `t`.
pub(crate) fn subst_params(t: &Type, params: &[String], args: &[Type]) -> Type {
    if params.is_empty() {
        return t.clone();
    }
    t.subst_vars(&|n| params.iter().position(|p| p == n).map(|i| args[i].clone()))
}
