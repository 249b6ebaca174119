//! Translation of heap-free Viper expressions (domain axiom bodies) to terms, for one
//! ground instance of the enclosing domain: types come from the semantic tables with the
//! domain's type variables substituted. Heap-dependent or otherwise foreign constructs are
//! reported as [`Unsupported`], and the caller skips that axiom.

use std::collections::HashMap;

use germanium_semantics::types::Type;
use germanium_semantics::{CallTarget, FieldTarget, Semantics, VarId};
use germanium_smt::{Quantifier, QuantifierKind, Symbol, Term};
use germanium_syntax::ast::{
    BinaryOp, CollectionKind, Expr, ExprKind, QuantifierKind as ViperQuantifier, UnaryOp,
};

use super::instances::apply_subst;
use super::operators::{self, same_numeric, BinaryTerm};
use super::{triggers, FunctionCalls, Theories, TheoryOp, Unsupported};

/// Translator for the expressions of one domain instance.
pub(crate) struct PureTranslator<'a> {
    theories: &'a Theories,
    sem: &'a Semantics,
    subst: &'a HashMap<String, Type>,
    calls: FunctionCalls<'a>,
    env: HashMap<VarId, Term>,
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(what.into()))
}

impl<'a> PureTranslator<'a> {
    pub fn new(
        theories: &'a Theories,
        sem: &'a Semantics,
        subst: &'a HashMap<String, Type>,
        calls: FunctionCalls<'a>,
    ) -> Self {
        PureTranslator {
            theories,
            sem,
            subst,
            calls,
            env: HashMap::new(),
        }
    }

    /// The ground type of `e` in this instance.
    fn ty(&self, e: &Expr) -> Result<Type, Unsupported> {
        match self.sem.type_of(e.id) {
            Some(t) => self.ground(t),
            None => unsupported("an expression without a type"),
        }
    }

    fn ground(&self, t: &Type) -> Result<Type, Unsupported> {
        let t = apply_subst(t, self.subst);
        if t.is_ground() {
            Ok(t)
        } else {
            unsupported(format!("the non-ground type {t}"))
        }
    }

    fn grounds(&self, ts: &[Type]) -> Result<Vec<Type>, Unsupported> {
        ts.iter().map(|t| self.ground(t)).collect()
    }

    fn apply(&self, op: TheoryOp, args: Vec<Term>) -> Result<Term, Unsupported> {
        self.theories.apply(&op, args)
    }

    pub fn expr(&mut self, e: &Expr) -> Result<Term, Unsupported> {
        match &e.kind {
            ExprKind::IntLit(text) => {
                let Some(value) = Term::int_from_text(text) else {
                    return unsupported(format!("the integer literal {text}"));
                };
                Ok(if self.ty(e)? == Type::Perm {
                    Term::to_real(value)
                } else {
                    value
                })
            }
            ExprKind::BoolLit(b) => Ok(Term::bool(*b)),
            ExprKind::Null => Ok(self.theories.null()),
            ExprKind::Write => Ok(Term::real(1, 1)),
            ExprKind::NoPerm => Ok(Term::real(0, 1)),
            ExprKind::Ident(name) => {
                let var = self.sem.idents.get(e.id.0 as usize).copied().flatten();
                match var.and_then(|v| self.env.get(&v)) {
                    Some(t) => Ok(t.clone()),
                    None => unsupported(format!("the free variable {}", name.name)),
                }
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a)?;
                Ok(match op {
                    UnaryOp::Neg => Term::neg(a),
                    UnaryOp::Not => Term::not(a),
                })
            }
            ExprKind::Binary(op, a, b) => self.binary(e, *op, a, b),
            ExprKind::Cond(c, a, b) => {
                let (c, a, b) = (self.expr(c)?, self.expr(a)?, self.expr(b)?);
                let (a, b) = same_numeric(a, b);
                Ok(Term::ite(c, a, b))
            }
            ExprKind::Ascribed(inner, _) | ExprKind::Annotated(_, inner) => self.expr(inner),
            ExprKind::Let(_, value, body) => {
                let value = self.expr(value)?;
                let Some(var) = self.sem.binders.get(&(e.id, 0)).copied() else {
                    return unsupported("an unresolved let");
                };
                self.env.insert(var, value);
                let body = self.expr(body);
                self.env.remove(&var);
                body
            }
            ExprKind::Quantifier {
                kind,
                vars,
                triggers,
                body,
            } => {
                let mut bound = Vec::new();
                for i in 0..vars.len() {
                    let Some(var) = self.sem.binders.get(&(e.id, i)).copied() else {
                        return unsupported("an unresolved quantified variable");
                    };
                    let info = self.sem.var(var);
                    let sort = self.theories.sort(&self.ground(&info.ty)?)?;
                    let term = Term::var(Symbol::user(&format!("{}.{}", info.name, var.0)), sort);
                    self.env.insert(var, term.clone());
                    bound.push((var, term));
                }
                let result = self.quantifier(*kind, &bound, triggers, body);
                for (var, _) in &bound {
                    self.env.remove(var);
                }
                result
            }
            ExprKind::Call(name, args) => {
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                match self.sem.call(e.id) {
                    Some(CallTarget::DomainFunction {
                        domain,
                        function,
                        type_args,
                    }) => {
                        let type_args = self.grounds(type_args)?;
                        let op = TheoryOp::DomainFunction {
                            domain: domain.clone(),
                            function: function.clone(),
                            type_args,
                        };
                        self.apply(op, args)
                    }
                    Some(CallTarget::AdtConstructor {
                        adt,
                        constructor,
                        type_args,
                    }) => {
                        let type_args = self.grounds(type_args)?;
                        let op = TheoryOp::AdtConstructor {
                            adt: adt.clone(),
                            constructor: constructor.clone(),
                            type_args,
                        };
                        self.apply(op, args)
                    }
                    Some(CallTarget::Function(f)) => match (self.calls)(f, args) {
                        Some(term) => Ok(term),
                        None => unsupported(format!("the call of function {f} in a domain axiom")),
                    },
                    _ => unsupported(format!("the call of {} in a domain axiom", name.name)),
                }
            }
            ExprKind::FieldAccess(receiver, field) => {
                let receiver = self.expr(receiver)?;
                match self.sem.field_access(e.id) {
                    Some(FieldTarget::AdtDestructor {
                        adt,
                        constructor,
                        destructor,
                        type_args,
                    }) => {
                        let op = TheoryOp::AdtDestructor {
                            adt: adt.clone(),
                            constructor: constructor.clone(),
                            destructor: destructor.clone(),
                            type_args: self.grounds(type_args)?,
                        };
                        self.apply(op, vec![receiver])
                    }
                    Some(FieldTarget::AdtDiscriminator {
                        adt,
                        constructor,
                        type_args,
                    }) => {
                        let op = TheoryOp::AdtDiscriminator {
                            adt: adt.clone(),
                            constructor: constructor.clone(),
                            type_args: self.grounds(type_args)?,
                        };
                        self.apply(op, vec![receiver])
                    }
                    _ => unsupported(format!(
                        "the field access .{} in a domain axiom",
                        field.name
                    )),
                }
            }
            ExprKind::Collection(kind, _, elems) => {
                let elems = elems
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                let op = match (kind, self.ty(e)?) {
                    (CollectionKind::Seq, Type::Seq(t)) => TheoryOp::SeqLiteral(*t),
                    (CollectionKind::Set, Type::Set(t)) => TheoryOp::SetLiteral(*t),
                    (CollectionKind::Multiset, Type::Multiset(t)) => TheoryOp::MultisetLiteral(*t),
                    (_, t) => return unsupported(format!("a collection literal of type {t}")),
                };
                self.apply(op, elems)
            }
            ExprKind::MapLit(_, pairs) => {
                let Type::Map(k, v) = self.ty(e)? else {
                    return unsupported("a map literal of a non-map type");
                };
                let mut flat = Vec::new();
                for (key, value) in pairs {
                    flat.push(self.expr(key)?);
                    flat.push(self.expr(value)?);
                }
                self.apply(TheoryOp::MapLiteral(*k, *v), flat)
            }
            ExprKind::Range(a, b) => {
                let args = vec![self.expr(a)?, self.expr(b)?];
                self.apply(TheoryOp::SeqRange, args)
            }
            ExprKind::Index(s, i) => {
                let args = vec![self.expr(s)?, self.expr(i)?];
                match self.ty(s)? {
                    Type::Seq(t) => self.apply(TheoryOp::SeqIndex(*t), args),
                    Type::Map(k, v) => self.apply(TheoryOp::MapLookup(*k, *v), args),
                    t => unsupported(format!("indexing a {t}")),
                }
            }
            ExprKind::Slice(s, from, to) => {
                let Type::Seq(t) = self.ty(s)? else {
                    return unsupported("slicing a non-sequence");
                };
                let mut seq = self.expr(s)?;
                if let Some(to) = to {
                    let to = self.expr(to)?;
                    seq = self.apply(TheoryOp::SeqTake((*t).clone()), vec![seq, to])?;
                }
                if let Some(from) = from {
                    let from = self.expr(from)?;
                    seq = self.apply(TheoryOp::SeqDrop(*t), vec![seq, from])?;
                }
                Ok(seq)
            }
            ExprKind::Update(s, i, v) => {
                let args = vec![self.expr(s)?, self.expr(i)?, self.expr(v)?];
                match self.ty(s)? {
                    Type::Seq(t) => self.apply(TheoryOp::SeqUpdate(*t), args),
                    Type::Map(k, v) => self.apply(TheoryOp::MapUpdate(*k, *v), args),
                    t => unsupported(format!("updating a {t}")),
                }
            }
            ExprKind::Length(s) => {
                let args = vec![self.expr(s)?];
                let op = match self.ty(s)? {
                    Type::Seq(t) => TheoryOp::SeqLength(*t),
                    Type::Set(t) => TheoryOp::SetCardinality(*t),
                    Type::Multiset(t) => TheoryOp::MultisetCardinality(*t),
                    Type::Map(k, v) => TheoryOp::MapCardinality(*k, *v),
                    t => return unsupported(format!("the size of a {t}")),
                };
                self.apply(op, args)
            }
            ExprKind::MapDomain(m) | ExprKind::MapRange(m) => {
                let Type::Map(k, v) = self.ty(m)? else {
                    return unsupported("domain/range of a non-map");
                };
                let args = vec![self.expr(m)?];
                let op = match &e.kind {
                    ExprKind::MapDomain(_) => TheoryOp::MapDomain(*k, *v),
                    _ => TheoryOp::MapRange(*k, *v),
                };
                self.apply(op, args)
            }
            _ => unsupported("a heap-dependent or specification-only expression in a domain axiom"),
        }
    }

    fn quantifier(
        &mut self,
        kind: ViperQuantifier,
        bound: &[(VarId, Term)],
        triggers: &[germanium_syntax::ast::Trigger],
        body: &Expr,
    ) -> Result<Term, Unsupported> {
        let body = self.expr(body)?;
        let mut patterns = Vec::new();
        for trigger in triggers {
            patterns.push(
                trigger
                    .exprs
                    .iter()
                    .map(|t| self.expr(t))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        let vars: Vec<Term> = bound.iter().map(|(_, t)| t.clone()).collect();
        if patterns.is_empty() {
            patterns = triggers::infer(&vars, &body);
        }
        let vars = vars
            .iter()
            .filter_map(|v| match v.kind() {
                germanium_smt::TermKind::Var(name) => Some((name.clone(), v.sort().clone())),
                _ => None,
            })
            .collect();
        let kind = match kind {
            ViperQuantifier::Forall => QuantifierKind::Forall,
            ViperQuantifier::Exists => QuantifierKind::Exists,
        };
        Ok(Term::quantifier(Quantifier {
            kind,
            vars,
            body,
            triggers: patterns,
            qid: None,
            weight: None,
        }))
    }

    fn binary(&mut self, e: &Expr, op: BinaryOp, a: &Expr, b: &Expr) -> Result<Term, Unsupported> {
        let (ta, tb) = (self.ty(a)?, self.ty(b)?);
        let (x, y) = (self.expr(a)?, self.expr(b)?);
        let result = self.ty(e)?;
        match operators::binary_term(op, &result, &ta, &tb, x, y) {
            BinaryTerm::Term(t) => Ok(t),
            BinaryTerm::Theory { op, args, negated } => {
                let t = self.apply(op, args)?;
                Ok(if negated { Term::not(t) } else { t })
            }
            BinaryTerm::Unsupported(why) => unsupported(why),
        }
    }
}
