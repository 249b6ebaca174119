//! Pure expressions to terms over the explicit state, with their definedness checks made
//! first where the expression is evaluated (`guard`: the path condition, strengthened
//! inside `&&`, `||`, `==>` and conditionals, whose sides are evaluated only when needed):
//! permission to read a field, a non-zero divisor.

use germanium_semantics::types::Type;
use germanium_semantics::{CallTarget, FieldTarget};
use germanium_smt::Term;
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use germanium_theories::operators::{binary_term, BinaryTerm};
use germanium_theories::TheoryOp;
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::lower::{unsupported, Lower, R};
use crate::state::{State, OLD};

impl Lower<'_, '_> {
    pub fn expr(&mut self, st: &State, guard: &Term, e: &Expr, ctx: &ErrorContext) -> R<Term> {
        if let Some(t) = self.modes.overrides.as_ref().and_then(|o| o.get(&e.id)) {
            return Ok(t.clone());
        }
        match &e.kind {
            ExprKind::IntLit(text) => match Term::int_from_text(text) {
                Some(t) => Ok(t),
                None => unsupported(e.span, "this integer literal"),
            },
            ExprKind::BoolLit(b) => Ok(Term::bool(*b)),
            ExprKind::Null => Ok(self.t.theories.null()),
            ExprKind::Result => match &self.result {
                Some(r) => Ok(r.clone()),
                None => unsupported(e.span, "`result` here"),
            },
            ExprKind::Ident(_) => match st.store.get(&self.variable(e)?) {
                Some(t) => Ok(t.clone()),
                None => unsupported(e.span, "this variable"),
            },
            // `@reveal() f(..)`: this application of an opaque function is defined.
            ExprKind::Annotated(a, x) if a.name.name == "reveal" => {
                self.with_modes(|m| m.revealing = Some(x.id), |l| l.expr(st, guard, x, ctx))
            }
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => self.expr(st, guard, x, ctx),
            ExprKind::Unary(UnaryOp::Not, x) => Ok(Term::not(self.expr(st, guard, x, ctx)?)),
            ExprKind::Unary(UnaryOp::Neg, x) => Ok(Term::neg(self.expr(st, guard, x, ctx)?)),
            ExprKind::Cond(c, a, b) => {
                let c = self.expr(st, guard, c, ctx)?;
                let then_guard = Term::and([guard.clone(), c.clone()]);
                let else_guard = Term::and([guard.clone(), Term::not(c.clone())]);
                let a = self.expr(st, &then_guard, a, ctx)?;
                let b = self.expr(st, &else_guard, b, ctx)?;
                Ok(Term::ite(c, a, b))
            }
            ExprKind::Binary(op, a, b) => self.binary(st, guard, e, *op, a, b, ctx),
            ExprKind::FieldAccess(rcv, field) => match self.t.sem.field_access(e.id) {
                Some(FieldTarget::Field(f)) if self.snapshot.is_some() => {
                    let f = f.clone();
                    let r = self.expr(st, guard, rcv, ctx)?;
                    self.read_location(st, &f, r, e)
                }
                Some(FieldTarget::Field(f)) => {
                    let f = f.clone();
                    let r = self.expr(st, guard, rcv, ctx)?;
                    let (Some(heap), Some(mask)) = (st.memory.heap.get(&f), st.memory.mask.get(&f))
                    else {
                        return unsupported(field.span, "this field");
                    };
                    let held = Term::gt(Term::select(mask.clone(), r.clone()), Term::real(0, 1));
                    self.defined(guard, held, ctx, Reason::InsufficientPermission, e);
                    let value = Term::select(heap.clone(), r);
                    if matches!(self.t.sem.type_of(e.id), Some(Type::Ref)) {
                        // Values in the heap are allocated references.
                        let allocated = Term::select(st.memory.allocated.clone(), value.clone());
                        self.vc.fact(Term::implies(guard.clone(), allocated));
                    }
                    Ok(value)
                }
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
                        type_args: type_args.clone(),
                    };
                    let value = self.expr(st, guard, rcv, ctx)?;
                    self.theory(op, vec![value], e)
                }
                Some(FieldTarget::AdtDiscriminator {
                    adt,
                    constructor,
                    type_args,
                }) => {
                    let op = TheoryOp::AdtDiscriminator {
                        adt: adt.clone(),
                        constructor: constructor.clone(),
                        type_args: type_args.clone(),
                    };
                    let value = self.expr(st, guard, rcv, ctx)?;
                    self.theory(op, vec![value], e)
                }
                None => unsupported(field.span, "an unresolved field"),
            },
            // A function's axioms speak of its footprint's values, not of what is held.
            ExprKind::Perm(..) | ExprKind::Forperm { .. } if self.snapshot.is_some() => {
                unsupported(
                    e.span,
                    "permission introspection in a function's definition",
                )
            }
            ExprKind::Perm(loc) => {
                let (map, index) = self.resource_at(st, guard, loc, ctx)?;
                let masks = self.perm_masks.as_ref().unwrap_or(&st.memory.mask);
                match masks.get(&map) {
                    Some(mask) => Ok(Term::select(mask.clone(), index)),
                    None => unsupported(loc.span, "this location"),
                }
            }
            ExprKind::Unfolding(access, body) => self.unfolding(st, guard, access, body, ctx),
            ExprKind::Forperm {
                resources, body, ..
            } => self.with_modes(
                |m| m.binding = true,
                |l| l.forperm(st, guard, e, resources, body, ctx),
            ),
            ExprKind::Asserting(a, x) => self.asserting(st, guard, a, x, ctx),
            ExprKind::Applying(w, x) => self.applying(st, guard, w, x, ctx),
            ExprKind::ReadPerm(kind) => self.read_perm(st, guard, e, kind, ctx),
            ExprKind::Write => Ok(Term::real(1, 1)),
            // Inside an amount (`c ? wildcard : none`): some positive amount. Inhaled, it is
            // one; taken, the check needs it held whatever it is (never less strict than
            // Viper's, which chooses it below what is held).
            ExprKind::Wildcard => Ok(self.some_amount()),
            ExprKind::NoPerm => Ok(Term::real(0, 1)),
            ExprKind::Old(label, x) => {
                let name = label.as_ref().map_or(OLD, |l| l.name.as_str());
                let Some(memory) = st.labels.get(name) else {
                    return unsupported(e.span, "`old` of a label not reached on every path here");
                };
                let then = State {
                    memory: memory.clone(),
                    ..st.clone()
                };
                // `perm` inside `old` reads the old state's permissions, exhale or not.
                let during_exhale = self.perm_masks.take();
                // A wand's right-hand side checked well-formed reads its left-hand side's
                // state as it may be (it is read where the wand is packaged or applied).
                let lenient = self.modes.wand_wellformedness && name == crate::wands::LHS;
                let r = if lenient {
                    self.leniently(|l| l.expr(&then, guard, x, ctx))
                } else {
                    self.expr(&then, guard, x, ctx)
                };
                self.perm_masks = during_exhale;
                r
            }
            ExprKind::Let(_, value, body) => {
                let mut v = self.expr(st, guard, value, ctx)?;
                // Named, so that its terms reach the solver even where the body does not
                // use it (a `let` can be there for the axioms its value triggers).
                if !self.modes.binding && self.snapshot.is_none() {
                    v = self.vc.define("let", v);
                }
                let Some(var) = self.t.sem.binders.get(&(e.id, 0)).copied() else {
                    return unsupported(e.span, "this `let`");
                };
                let mut inner = st.clone();
                inner.store.insert(var, v);
                self.expr(&inner, guard, body, ctx)
            }
            ExprKind::Call(_, args) => {
                let target = self.t.sem.call(e.id).cloned();
                let mut terms = Vec::new();
                for a in args {
                    terms.push(self.expr(st, guard, a, ctx)?);
                }
                let op = match target {
                    Some(CallTarget::DomainFunction {
                        domain,
                        function,
                        type_args,
                    }) => TheoryOp::DomainFunction {
                        domain,
                        function,
                        type_args,
                    },
                    Some(CallTarget::AdtConstructor {
                        adt,
                        constructor,
                        type_args,
                    }) => TheoryOp::AdtConstructor {
                        adt,
                        constructor,
                        type_args,
                    },
                    Some(CallTarget::Function(name)) => {
                        return self.apply_function(st, guard, e, &name, terms, ctx);
                    }
                    _ => return unsupported(e.span, "this call"),
                };
                self.theory(op, terms, e)
            }
            // A pure `[a, b]`: `b` where it is exhaled, `a` where it is inhaled or assumed.
            ExprKind::InhaleExhale(a, b) => {
                let part = if self.modes.exhale_parts { b } else { a };
                self.expr(st, guard, part, ctx)
            }
            _ => match self.collection(st, guard, e, ctx)? {
                Some(t) => Ok(t),
                None => unsupported(e.span, format!("this expression ({})", kind_name(&e.kind))),
            },
        }
    }

    fn theory(&self, op: TheoryOp, args: Vec<Term>, e: &Expr) -> R<Term> {
        self.t
            .theories
            .apply(&op, args)
            .or_else(|u| unsupported(e.span, u.0))
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let x = self.expr(st, guard, a, ctx)?;
        // The right side is evaluated only where the left one lets it matter.
        let right_guard = match op {
            BinaryOp::And | BinaryOp::Implies => Term::and([guard.clone(), x.clone()]),
            BinaryOp::Or => Term::and([guard.clone(), Term::not(x.clone())]),
            _ => guard.clone(),
        };
        let y = self.expr(st, &right_guard, b, ctx)?;
        match op {
            BinaryOp::And => return Ok(Term::and([x, y])),
            BinaryOp::Or => return Ok(Term::or([x, y])),
            BinaryOp::Implies => return Ok(Term::implies(x, y)),
            BinaryOp::Iff => return Ok(Term::iff(x, y)),
            BinaryOp::Eq | BinaryOp::Ne => {
                let ty = self.type_of(a)?;
                let eq = self
                    .t
                    .theories
                    .equal(&ty, x, y)
                    .or_else(|u| unsupported(e.span, u.0))?;
                return Ok(if op == BinaryOp::Eq {
                    eq
                } else {
                    Term::not(eq)
                });
            }
            BinaryOp::Div | BinaryOp::IntDiv | BinaryOp::Mod => {
                let zero = match y.sort() {
                    germanium_smt::Sort::Real => Term::real(0, 1),
                    _ => Term::int(0),
                };
                let nonzero = Term::not(Term::eq(y.clone(), zero));
                self.defined(guard, nonzero, ctx, Reason::DivisionByZero, b);
            }
            _ => {}
        }
        let (result, left, right) = (self.type_of(e)?, self.type_of(a)?, self.type_of(b)?);
        if matches!(left, Type::Perm) && !matches!(result, Type::Perm | Type::Bool) {
            return unsupported(e.span, "this permission arithmetic");
        }
        match binary_term(op, &result, &left, &right, x, y) {
            BinaryTerm::Term(t) if op == BinaryOp::Div && result == Type::Perm => {
                self.division_signs(&t);
                Ok(t)
            }
            BinaryTerm::Term(t) => Ok(t),
            BinaryTerm::Theory { op, args, negated } => {
                let t = self.theory(op, args, e)?;
                Ok(if negated { Term::not(t) } else { t })
            }
            BinaryTerm::Unsupported(why) => unsupported(e.span, why),
        }
    }
}

impl Lower<'_, '_> {
    /// The signs of a permission `a / b` with `b` not a numeral: the solver's arithmetic
    /// would need nonlinear reasoning for `1 / n >= 0` where `n > 0` (as `product`, facts
    /// true of division that prove nothing more).
    fn division_signs(&mut self, t: &Term) {
        let germanium_smt::TermKind::Op(_, args) = t.kind() else {
            return;
        };
        let [a, b] = args.as_slice() else {
            return;
        };
        if matches!(
            b.kind(),
            germanium_smt::TermKind::Real(_) | germanium_smt::TermKind::Int(_)
        ) {
            return;
        }
        let zero = Term::real(0, 1);
        let positive = Term::gt(b.clone(), zero.clone());
        self.vc.fact(Term::and([
            Term::implies(
                Term::and([positive.clone(), Term::ge(a.clone(), zero.clone())]),
                Term::ge(t.clone(), zero.clone()),
            ),
            Term::implies(
                Term::and([positive, Term::gt(a.clone(), zero.clone())]),
                Term::gt(t.clone(), zero),
            ),
        ]));
    }
}

/// The name of an expression's kind, for a message about what is not lowered.
pub fn kind_name(kind: &impl std::fmt::Debug) -> String {
    let text = format!("{kind:?}");
    let end = text.find(['(', ' ', '{']).unwrap_or(text.len());
    text[..end].to_string()
}
