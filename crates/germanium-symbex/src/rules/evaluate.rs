//! Evaluation: a pure expression to a term, checking well-definedness on the way
//! (permission to read fields, divisors non-zero, sequence indices in range, map keys
//! present, function preconditions). Conditional sub-expressions are evaluated under
//! guards instead of by branching, so evaluation never splits the path.

use std::collections::{HashMap, HashSet};

use germanium_semantics::{CallTarget, FieldTarget, Type};
use germanium_smt::{Sort, Term};
use germanium_syntax::ast::{BinaryOp, CollectionKind, Expr, ExprKind, QuantifierKind, UnaryOp};

use crate::errors::{ErrorContext, Reason};
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::triggers;
use crate::rules::wands::LHS_STATE;
use crate::state::{Heap, Permission, Resource, State, PRE_STATE};
use crate::trace::Step;
use germanium_theories::operators::{self, BinaryTerm};
use germanium_theories::TheoryOp;

/// How many quantified chunks a read nested in a trigger may name in turn.
const TRIGGER_CHOICES: usize = 2;

impl<'e, 'a> Verifier<'e, 'a> {
    /// Evaluates `e` in state `st`, reading fields from `heap`.
    pub fn eval(&mut self, st: &State, heap: &Heap, e: &Expr, ctx: &ErrorContext) -> R<Term> {
        self.traced(Step::Evaluate, e.span, None, String::new, |v| {
            v.eval_step(st, heap, e, ctx)
        })
    }

    fn eval_step(&mut self, st: &State, heap: &Heap, e: &Expr, ctx: &ErrorContext) -> R<Term> {
        match &e.kind {
            ExprKind::IntLit(text) => match Term::int_from_text(text) {
                Some(t) => Ok(t),
                None => Err(self.unsupported(e.span, "this integer literal")),
            },
            ExprKind::BoolLit(b) => Ok(Term::bool(*b)),
            ExprKind::Null => Ok(self.env.null()),
            ExprKind::Result => match &self.modes.result {
                Some(t) => Ok(t.clone()),
                None => Err(self.unsupported(e.span, "`result` here")),
            },
            ExprKind::Ident(_) => self.variable(st, e),
            ExprKind::Unary(op, x) => {
                let t = self.eval(st, heap, x, ctx)?;
                Ok(match op {
                    UnaryOp::Not => Term::not(t),
                    UnaryOp::Neg => Term::neg(t),
                })
            }
            ExprKind::Binary(op, l, r) => self.eval_binary(st, heap, e, *op, l, r, ctx),
            ExprKind::Cond(c, a, b) => {
                let c = self.eval(st, heap, c, ctx)?;
                let a = self.under(c.clone(), |v| v.eval(st, heap, a, ctx))?;
                let b = self.under(Term::not(c.clone()), |v| v.eval(st, heap, b, ctx))?;
                Ok(Term::ite(c, a, b))
            }
            ExprKind::FieldAccess(rcv, field) => match self.env.sem.field_access(e.id).cloned() {
                Some(FieldTarget::Field(f)) => {
                    let r = self.as_receiver(|v| v.eval(st, heap, rcv, ctx))?;
                    // A receiver inside a wand's right-hand side may be framed by its
                    // left-hand side.
                    let lhs = (self.modes.wand_rhs && self.modes.reading_receiver)
                        .then(|| st.old_heaps.get(LHS_STATE))
                        .flatten();
                    self.read_field(heap, lhs, &f, r, e, ctx)
                }
                Some(FieldTarget::AdtDestructor {
                    adt,
                    constructor,
                    destructor,
                    type_args,
                }) => {
                    let r = self.eval(st, heap, rcv, ctx)?;
                    self.theory(
                        TheoryOp::AdtDestructor {
                            adt,
                            constructor,
                            destructor,
                            type_args,
                        },
                        vec![r],
                        e,
                    )
                }
                Some(FieldTarget::AdtDiscriminator {
                    adt,
                    constructor,
                    type_args,
                }) => {
                    let r = self.eval(st, heap, rcv, ctx)?;
                    self.theory(
                        TheoryOp::AdtDiscriminator {
                            adt,
                            constructor,
                            type_args,
                        },
                        vec![r],
                        e,
                    )
                }
                None => Err(self.unsupported(field.span, "an unresolved field")),
            },
            ExprKind::Call(name, args) => {
                let target = self.env.sem.call(e.id).cloned();
                let mut terms = Vec::new();
                for a in args {
                    terms.push(self.eval(st, heap, a, ctx)?);
                }
                match target {
                    Some(CallTarget::Function(f)) => {
                        self.apply_function(st, heap, e, &f, terms, ctx)
                    }
                    Some(CallTarget::DomainFunction {
                        domain,
                        function,
                        type_args,
                    }) => self.theory(
                        TheoryOp::DomainFunction {
                            domain,
                            function,
                            type_args,
                        },
                        terms,
                        e,
                    ),
                    Some(CallTarget::AdtConstructor {
                        adt,
                        constructor,
                        type_args,
                    }) => self.theory(
                        TheoryOp::AdtConstructor {
                            adt,
                            constructor,
                            type_args,
                        },
                        terms,
                        e,
                    ),
                    _ => Err(self.unsupported(
                        name.span,
                        format!("the predicate instance `{}` in an expression", name.name),
                    )),
                }
            }
            ExprKind::Annotated(a, x) if a.name.name == "reveal" => {
                let outer = self.member.revealing.replace(x.id);
                let r = self.eval(st, heap, x, ctx);
                self.member.revealing = outer;
                r
            }
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => self.eval(st, heap, x, ctx),
            ExprKind::Old(label, x) => {
                let key = label.as_ref().map_or(PRE_STATE, |l| l.name.as_str());
                match st.old_heaps.get(key) {
                    Some(old) => {
                        let old = old.clone();
                        let unchecked = self.modes.wand_rhs_check && key == LHS_STATE;
                        self.with_modes(
                            |m| m.checking &= !unchecked,
                            |v| v.with_perm_heap(None, |v| v.eval(st, &old, x, ctx)),
                        )
                    }
                    None if label.is_some() => {
                        // The label exists (the program type-checked) but this path did not
                        // pass it.
                        if self.modes.checking {
                            self.report(ctx, Reason::LabelledStateNotReached(key.to_string()), e);
                        }
                        Err(Abort::Failed)
                    }
                    None => Err(self.unsupported(e.span, "`old` here")),
                }
            }
            ExprKind::Let(_, value, body) => {
                let v = self.eval(st, heap, value, ctx)?;
                let Some(var) = self.env.sem.binders.get(&(e.id, 0)).copied() else {
                    return Err(self.unsupported(e.span, "this `let`"));
                };
                self.name_let_value(&v, value.span)?;
                self.member.bound.push((var, v));
                let r = self.eval(st, heap, body, ctx);
                self.member.bound.pop();
                r
            }
            ExprKind::Quantifier {
                kind,
                vars,
                triggers,
                body,
            } => {
                if crate::env::analysis::is_impure(self.env.sem, body) {
                    return Err(self.unsupported(e.span, "quantified permissions"));
                }
                let n = vars.len();
                self.eval_quantifier_with(st, heap, e, *kind, n, triggers, ctx, |v| {
                    v.eval(st, heap, body, ctx)
                })
            }
            ExprKind::Perm(loc) => self.eval_perm(st, heap, loc, ctx),
            ExprKind::Write => Ok(Permission::write().0),
            ExprKind::NoPerm => Ok(Permission::none().0),
            ExprKind::Wildcard => self.wildcard_amount(e.span),
            ExprKind::Collection(kind, _, elems) => {
                let ty = self.type_of(e)?;
                let mut terms = Vec::new();
                for x in elems {
                    terms.push(self.eval(st, heap, x, ctx)?);
                }
                let elem = element_type(&ty);
                let op = match (kind, terms.is_empty()) {
                    (CollectionKind::Seq, true) => TheoryOp::SeqEmpty(elem),
                    (CollectionKind::Seq, false) => TheoryOp::SeqLiteral(elem),
                    (CollectionKind::Set, true) => TheoryOp::SetEmpty(elem),
                    (CollectionKind::Set, false) => TheoryOp::SetLiteral(elem),
                    (CollectionKind::Multiset, true) => TheoryOp::MultisetEmpty(elem),
                    (CollectionKind::Multiset, false) => TheoryOp::MultisetLiteral(elem),
                };
                self.theory(op, terms, e)
            }
            ExprKind::MapLit(_, pairs) => {
                let ty = self.type_of(e)?;
                let (k, v) = map_types(&ty);
                let mut terms = Vec::new();
                for (a, b) in pairs {
                    terms.push(self.eval(st, heap, a, ctx)?);
                    terms.push(self.eval(st, heap, b, ctx)?);
                }
                let op = if terms.is_empty() {
                    TheoryOp::MapEmpty(k, v)
                } else {
                    TheoryOp::MapLiteral(k, v)
                };
                self.theory(op, terms, e)
            }
            ExprKind::Range(a, b) => {
                let a = self.eval(st, heap, a, ctx)?;
                let b = self.eval(st, heap, b, ctx)?;
                self.theory(TheoryOp::SeqRange, vec![a, b], e)
            }
            ExprKind::Index(s, i) => self.eval_index(st, heap, e, s, i, ctx),
            ExprKind::Slice(s, from, to) => {
                let ty = self.type_of(s)?;
                let elem = element_type(&ty);
                let mut t = self.eval(st, heap, s, ctx)?;
                let from = match from {
                    Some(f) => Some(self.eval(st, heap, f, ctx)?),
                    None => None,
                };
                if let Some(to) = to {
                    let to = self.eval(st, heap, to, ctx)?;
                    t = self.theory(TheoryOp::SeqTake(elem.clone()), vec![t, to], e)?;
                }
                if let Some(from) = from {
                    t = self.theory(TheoryOp::SeqDrop(elem), vec![t, from], e)?;
                }
                Ok(t)
            }
            ExprKind::Update(s, i, v) => {
                let ty = self.type_of(s)?;
                let st_ = self.eval(st, heap, s, ctx)?;
                let it = self.eval(st, heap, i, ctx)?;
                let vt = self.eval(st, heap, v, ctx)?;
                match ty {
                    Type::Seq(elem) => {
                        self.check_seq_index(&st_, &it, *elem.clone(), s, i, ctx)?;
                        self.theory(TheoryOp::SeqUpdate(*elem), vec![st_, it, vt], e)
                    }
                    Type::Map(k, v) => {
                        self.theory(TheoryOp::MapUpdate(*k, *v), vec![st_, it, vt], e)
                    }
                    _ => Err(self.unsupported(e.span, "this update")),
                }
            }
            ExprKind::Length(x) => {
                let ty = self.type_of(x)?;
                let t = self.eval(st, heap, x, ctx)?;
                let op = match ty {
                    Type::Seq(t) => TheoryOp::SeqLength(*t),
                    Type::Set(t) => TheoryOp::SetCardinality(*t),
                    Type::Multiset(t) => TheoryOp::MultisetCardinality(*t),
                    Type::Map(k, v) => TheoryOp::MapCardinality(*k, *v),
                    _ => return Err(self.unsupported(e.span, "this cardinality")),
                };
                self.theory(op, vec![t], e)
            }
            ExprKind::MapDomain(m) | ExprKind::MapRange(m) => {
                let ty = self.type_of(m)?;
                let (k, v) = map_types(&ty);
                let t = self.eval(st, heap, m, ctx)?;
                let op = if matches!(e.kind, ExprKind::MapDomain(_)) {
                    TheoryOp::MapDomain(k, v)
                } else {
                    TheoryOp::MapRange(k, v)
                };
                self.theory(op, vec![t], e)
            }
            ExprKind::Lhs(_) => Err(self.unsupported(e.span, "`lhs` (magic wands)")),
            ExprKind::Unfolding(access, body) => self.eval_unfolding(st, heap, access, body, ctx),
            ExprKind::Applying(wand, body) => self.eval_applying(st, heap, wand, body, ctx),
            ExprKind::Asserting(a, x) => {
                // The assertion is checked (not consumed), then the expression evaluated.
                let mut scratch = State {
                    store: st.store.clone(),
                    heap: heap.clone(),
                    old_heaps: st.old_heaps.clone(),
                    label_loops: Vec::new(),
                };
                self.consume(&mut scratch, heap, a, ctx)?;
                self.eval(st, heap, x, ctx)
            }
            ExprKind::Forperm {
                vars,
                resources,
                body,
            } => self.eval_forperm(st, heap, e, vars.len(), resources, body, ctx),
            ExprKind::Acc(..) | ExprKind::InhaleExhale(..) => {
                Err(self.unsupported(e.span, "an accessibility predicate inside an expression"))
            }
            ExprKind::Epsilon => Err(self.unsupported(e.span, "`epsilon`")),
            ExprKind::ReadPerm(k) => self.eval_read_perm(st, heap, k, e, ctx),
        }
    }

    /// Runs `f` with `cond` added to the guards.
    pub fn under<T>(&mut self, cond: Term, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let span = germanium_syntax::Span::default();
        let shown = cond.clone();
        let detail = || format!("under {shown}");
        self.traced(Step::Branch, span, None, detail, |v| v.under_step(cond, f))
    }

    fn under_step<T>(&mut self, cond: Term, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        // A guard the path already assumes changes nothing: leaving it out keeps amounts
        // and facts unconditional (so, e.g., two full chunks of one field are seen distinct).
        if self.decider.assumes_literally(&cond) {
            return f(self);
        }
        self.member.guards.push(cond);
        let r = f(self);
        self.member.guards.pop();
        r
    }

    fn variable(&mut self, st: &State, e: &Expr) -> R<Term> {
        let var = self.env.sem.idents.get(e.id.0 as usize).copied().flatten();
        let Some(var) = var else {
            return Err(self.unsupported(e.span, "an unresolved identifier"));
        };
        if let Some((_, t)) = self.member.bound.iter().rev().find(|(v, _)| *v == var) {
            return Ok(t.clone());
        }
        match st.store.get(&var) {
            Some(t) => Ok(t.clone()),
            None => Err(self.unsupported(e.span, "a variable without a value")),
        }
    }

    pub fn theory(&mut self, op: TheoryOp, args: Vec<Term>, e: &Expr) -> R<Term> {
        let result = match &self.env.theories {
            Some(t) => t.apply(&op, args).map_err(|u| u.0),
            None => Err("collections, domains and ADTs are".to_string()),
        };
        result.map_err(|why| self.unsupported(e.span, why))
    }

    /// `receiver.field` in `heap`; where `heap` cannot give it, in `lhs` if given.
    fn read_field(
        &mut self,
        heap: &Heap,
        lhs: Option<&Heap>,
        field: &str,
        receiver: Term,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let resource = Resource::Field(field.to_string());
        let args = [receiver];
        // A trigger `{a.f}` matches the read (see `trigger_value_maps`).
        self.mention_instance(&resource, &args, e.span)?;
        // A dry run in a package reads the state around it too.
        let view = self.extraction_view(heap);
        let heap = view.as_ref().unwrap_or(heap);
        let found = self.find(heap, &resource, &args, e.span)?;
        if let Some(i) = found {
            if !self.modes.checking {
                return self.value_through(heap, i, &resource, &args, e.span);
            }
            // Only a shortcut: not proved, the amounts of all chunks are checked below.
            let amount = resources::amount_at(heap, i);
            if self.positive_read_amount(amount)
                || self.prove_cheaply(amount.is_positive(), e.span)?
            {
                return Ok(resources::snapshot_at(heap, i).clone());
            }
        }
        let positive = Permission::is_positive;
        let readable = !self.modes.checking
            || self.modes.lenient_reads
            || self
                .likely_holder(heap, &resource, &args[0], &args, positive, e.span)?
                .is_some()
            || self.prove(
                resources::perm_of(heap, &resource, &args).is_positive(),
                e.span,
            )?
            || self.dead_path(e.span)?;
        if readable {
            if self.modes.lenient_reads && self.modes.checking {
                if let Some(v) = self.folded_value(heap, field, &args[0], e.span)? {
                    return Ok(v);
                }
            }
            return self.read_value(heap, &resource, &args, e.span);
        }
        if let Some(lhs) = lhs {
            return self.read_field(lhs, None, field, args[0].clone(), e, ctx);
        }
        self.report(ctx, Reason::InsufficientPermission, e);
        Err(Abort::Failed)
    }

    /// `f`, evaluating a receiver (of a field read or an accessibility predicate): inside a
    /// wand's right-hand side, what it reads may be held by the left-hand side's state only
    /// (see `Modes::wand_rhs`).
    pub(crate) fn as_receiver<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if !self.modes.wand_rhs {
            return f(self);
        }
        self.with_modes(|m| m.reading_receiver = true, f)
    }

    /// `f` evaluating a wand's right-hand side: its receivers may be framed by the
    /// left-hand side's state (`old[lhs]` of the state evaluated), no other reads.
    pub(crate) fn in_wand_rhs<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.with_modes(
            |m| {
                m.wand_rhs = true;
                m.reading_receiver = false;
            },
            f,
        )
    }

    /// `perm(loc)`: in the heap set for `perm` during consumption, else in `heap`.
    fn eval_perm(&mut self, st: &State, heap: &Heap, loc: &Expr, ctx: &ErrorContext) -> R<Term> {
        let (resource, args) = if let Some(pa) = self.as_predicate_access(loc) {
            let mut args = Vec::new();
            for a in pa.args {
                args.push(self.eval(st, heap, a, ctx)?);
            }
            (Resource::Predicate(pa.name.clone()), args)
        } else if crate::env::analysis::is_wand(loc) {
            self.wand_location(st, heap, loc, ctx)?
        } else {
            let ExprKind::FieldAccess(rcv, _) = &loc.kind else {
                return Err(self.unsupported(loc.span, "this `perm`"));
            };
            let Some(FieldTarget::Field(field)) = self.env.sem.field_access(loc.id).cloned() else {
                return Err(self.unsupported(loc.span, "this `perm`"));
            };
            (Resource::Field(field), vec![self.eval(st, heap, rcv, ctx)?])
        };
        self.mention_instance(&resource, &args, loc.span)?;
        let current = self.member.perm_heap.clone();
        Ok(resources::perm_of(current.as_ref().unwrap_or(heap), &resource, &args).0)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_binary(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        op: BinaryOp,
        l: &Expr,
        r: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        match op {
            BinaryOp::And => {
                let a = self.eval(st, heap, l, ctx)?;
                let b = self.under(a.clone(), |v| v.eval(st, heap, r, ctx))?;
                return Ok(Term::and([a, b]));
            }
            BinaryOp::Or => {
                let a = self.eval(st, heap, l, ctx)?;
                let b = self.under(Term::not(a.clone()), |v| v.eval(st, heap, r, ctx))?;
                return Ok(Term::or([a, b]));
            }
            BinaryOp::Implies => {
                let a = self.eval(st, heap, l, ctx)?;
                let b = self.under(a.clone(), |v| v.eval(st, heap, r, ctx))?;
                return Ok(Term::implies(a, b));
            }
            BinaryOp::Wand => return Err(self.unsupported(e.span, "magic wands")),
            _ => {}
        }
        let a = self.eval(st, heap, l, ctx)?;
        let b = self.eval(st, heap, r, ctx)?;
        if matches!(op, BinaryOp::Div | BinaryOp::IntDiv | BinaryOp::Mod) {
            let zero = if *b.sort() == Sort::Int {
                Term::int(0)
            } else {
                Term::real(0, 1)
            };
            self.check(
                Term::not(Term::eq(b.clone(), zero)),
                ctx,
                Reason::DivisionByZero,
                r,
            )?;
        }
        let (result, left, right) = (self.type_of(e)?, self.type_of(l)?, self.type_of(r)?);
        match operators::binary_term(op, &result, &left, &right, a, b) {
            BinaryTerm::Term(t) => Ok(t),
            BinaryTerm::Theory { op, args, negated } => {
                let lengths = match &op {
                    TheoryOp::SeqAppend(elem) => Some((elem.clone(), args.clone())),
                    _ => None,
                };
                let t = self.theory(op, args, e)?;
                if let Some((elem, parts)) = lengths {
                    self.assume_append_length(&t, elem, parts, e)?;
                }
                Ok(if negated { Term::not(t) } else { t })
            }
            BinaryTerm::Unsupported(why) => Err(self.unsupported(e.span, why)),
        }
    }

    /// `|a ++ b| == |a| + |b|` as a ground fact (under the current guards), so a sequence
    /// built by many appends has a known length without a chain of quantifier
    /// instantiations as long as the sequence (which Z3 stops at its instantiation bound).
    fn assume_append_length(
        &mut self,
        appended: &Term,
        elem: germanium_semantics::Type,
        parts: Vec<Term>,
        e: &Expr,
    ) -> R<()> {
        let length =
            |v: &mut Self, s: Term| v.theory(TheoryOp::SeqLength(elem.clone()), vec![s], e);
        let whole = length(self, appended.clone())?;
        let mut sum = Vec::new();
        for part in parts {
            sum.push(length(self, part)?);
        }
        self.assume_guarded(Term::eq(whole, Term::add(sum)), e.span)
    }

    fn eval_index(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        s: &Expr,
        i: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let ty = self.type_of(s)?;
        let st_ = self.eval(st, heap, s, ctx)?;
        let it = self.eval(st, heap, i, ctx)?;
        match ty {
            Type::Seq(elem) => {
                self.check_seq_index(&st_, &it, *elem.clone(), s, i, ctx)?;
                self.theory(TheoryOp::SeqIndex(*elem), vec![st_, it], e)
            }
            Type::Map(k, v) => {
                let has = self.theory(
                    TheoryOp::MapContainsKey(*k.clone(), *v.clone()),
                    vec![it.clone(), st_.clone()],
                    e,
                )?;
                let m = crate::errors::text_of(self.env.sources, s.span);
                self.check(has, ctx, Reason::MapKeyContains(m), i)?;
                self.theory(TheoryOp::MapLookup(*k, *v), vec![st_, it], e)
            }
            _ => Err(self.unsupported(e.span, "this indexing")),
        }
    }

    fn check_seq_index(
        &mut self,
        s: &Term,
        i: &Term,
        elem: Type,
        s_expr: &Expr,
        i_expr: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let text = crate::errors::text_of(self.env.sources, s_expr.span);
        self.check(
            Term::ge(i.clone(), Term::int(0)),
            ctx,
            Reason::SeqIndexNegative(text.clone()),
            i_expr,
        )?;
        let len = self.theory(TheoryOp::SeqLength(elem), vec![s.clone()], s_expr)?;
        self.check(
            Term::lt(i.clone(), len),
            ctx,
            Reason::SeqIndexLength(text),
            i_expr,
        )?;
        Ok(())
    }

    /// The quantifier `e` whose body is read by `body` (with its variables bound).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn eval_quantifier_with(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        kind: QuantifierKind,
        n_vars: usize,
        trigger_sets: &[germanium_syntax::ast::Trigger],
        ctx: &ErrorContext,
        body: impl FnOnce(&mut Self) -> R<Term>,
    ) -> R<Term> {
        let mut constants = Vec::new();
        let mut vars = Vec::new();
        for i in 0..n_vars {
            let (var, symbol, c) = self.bound_variable(e, i)?;
            vars.push(symbol);
            constants.push((var, c));
        }
        let depth = self.member.bound.len();
        let deferred_from = self.member.deferred.len();
        self.member.bound.extend(constants.iter().cloned());
        self.member.quantifier_depth += 1;
        let fresh_mark = self.decider.fresh_mark();
        let scoped = self.push(e.span);
        let result = scoped.and_then(|_| {
            let t = body(self)?;
            // Triggers are not checked: they are only patterns.
            let sets = self.with_modes(
                |m| m.checking = false,
                |v| -> R<Vec<Vec<Term>>> {
                    let mut sets = Vec::new();
                    for set in trigger_sets {
                        let mut choices: Vec<Vec<Term>> = Vec::new();
                        for x in &set.exprs {
                            let alternatives = v.trigger_alternatives(st, heap, x, ctx)?;
                            if !alternatives.is_empty() {
                                choices.push(alternatives);
                            }
                        }
                        if choices.len() == set.exprs.len() {
                            sets.extend(crate::rules::quantified::combinations(&choices));
                        }
                    }
                    Ok(sets)
                },
            )?;
            Ok((t, sets))
        });
        let popped = self.pop(e.span);
        self.member.quantifier_depth -= 1;
        self.member.bound.truncate(depth);
        let facts: Vec<Term> = self.member.deferred.drain(deferred_from..).collect();
        let (body_term, sets) = result?;
        popped?;
        let mut map: HashMap<Term, Term> = constants
            .iter()
            .zip(&vars)
            .map(|((_, c), (s, sort))| (c.clone(), Term::var(s.clone(), sort.clone())))
            .collect();
        self.skolemize_fresh(fresh_mark, &facts, &vars, &mut map, e.span)?;
        let body_term = triggers::substitute(&body_term, &map);
        let mut sets: Vec<Vec<Term>> = sets
            .iter()
            .map(|set| set.iter().map(|t| triggers::substitute(t, &map)).collect())
            .collect();
        let symbols: Vec<_> = vars.iter().map(|(s, _)| s.clone()).collect();
        sets.retain(|set| triggers::valid_pattern(&symbols, set));
        if sets.is_empty() && trigger_sets.is_empty() {
            sets = self.limited_triggers(triggers::infer(&symbols, &body_term), e.span)?;
        } else if sets.is_empty() {
            // The given triggers cannot be expressed: never instantiate rather than let the
            // solver choose other terms (which could prove what the program's triggers do not).
            sets = vec![self.never_pattern(&vars, e.span)?];
        }
        let sets = self.with_membership_triggers(sets);
        // Function postconditions met in the body hold for every value of the variables.
        for fact in facts {
            let bound = triggers::substitute(&fact, &map);
            if bound == fact {
                // About none of the variables (a snapshot read in the body): as it is.
                if self.member.quantifier_depth > 0 {
                    self.member.deferred.push(fact.clone());
                }
                self.assume(fact, e.span)?;
                continue;
            }
            let fact = bound;
            let mut fact_triggers =
                self.limited_triggers(triggers::infer(&symbols, &fact), e.span)?;
            if fact_triggers.is_empty() {
                fact_triggers = sets.clone();
            } else {
                fact_triggers = self.with_membership_triggers(fact_triggers);
            }
            let quantified = Term::forall(vars.clone(), fact, fact_triggers);
            if self.member.quantifier_depth > 0 {
                self.member.deferred.push(quantified.clone());
            }
            self.assume(quantified, e.span)?;
        }
        Ok(match kind {
            QuantifierKind::Forall => Term::forall(vars, body_term, sets),
            QuantifierKind::Exists => Term::exists(vars, body_term, sets),
        })
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Maps each constant made fresh in a quantifier's body (since `mark`) that a deferred
    /// fact about the bound variables mentions to a function of the variables: the fact was
    /// assumed for one value of the variables, and the constant was chosen for that value
    /// only. (A constant only facts about none of the variables mention stays: those facts
    /// are assumed as they are.)
    fn skolemize_fresh(
        &mut self,
        mark: usize,
        facts: &[Term],
        vars: &[(germanium_smt::Symbol, Sort)],
        map: &mut HashMap<Term, Term>,
        span: germanium_syntax::Span,
    ) -> R<()> {
        if facts.is_empty() {
            return Ok(());
        }
        let fresh: HashSet<Term> = self.decider.fresh_since(mark).iter().cloned().collect();
        let mut made: Vec<Term> = Vec::new();
        for fact in facts {
            if map.keys().any(|x| triggers::mentions(fact, x)) {
                for c in fact.terms_among(&fresh) {
                    if !made.contains(&c) && !map.contains_key(&c) {
                        made.push(c);
                    }
                }
            }
        }
        self.skolemize(made, vars, map, span)
    }

    /// Maps each of `constants` to a fresh function of `vars` applied to them (a value
    /// chosen for one value of the variables becomes one per value).
    pub(crate) fn skolemize(
        &mut self,
        constants: Vec<Term>,
        vars: &[(germanium_smt::Symbol, Sort)],
        map: &mut HashMap<Term, Term>,
        span: germanium_syntax::Span,
    ) -> R<()> {
        let sorts: Vec<Sort> = vars.iter().map(|(_, s)| s.clone()).collect();
        let args: Vec<Term> = vars
            .iter()
            .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
            .collect();
        for c in constants {
            let name = self.decider.fresh_symbol("sk");
            let decl = germanium_smt::FunDecl::new(name, sorts.clone(), c.sort().clone());
            self.ensure_declared(&decl, span)?;
            map.insert(c, Term::app(&decl, args.clone()));
        }
        Ok(())
    }

    /// A pattern no term ever matches: an application of an otherwise unused function.
    /// The terms a trigger expression `x` may match (none if it cannot be expressed): a
    /// read of a location held through quantified chunks matches on their value maps, and
    /// a read nested inside names one chunk's map, each chunk in turn (a choice among
    /// chunks is no pattern; see `Modes::trigger_choice`).
    fn trigger_alternatives(
        &mut self,
        st: &State,
        heap: &Heap,
        x: &Expr,
        ctx: &ErrorContext,
    ) -> R<Vec<Term>> {
        let mut out: Vec<Term> = Vec::new();
        self.member.trigger_choices = 0;
        for choice in 0..TRIGGER_CHOICES {
            let terms = self.with_modes(
                |m| m.trigger_choice = Some(choice),
                |v| -> R<Vec<Term>> {
                    if let Some(maps) = v.trigger_value_maps(st, heap, x, ctx)? {
                        return Ok(maps);
                    }
                    match v.with_limited_applications(|v| v.eval(st, heap, x, ctx)) {
                        Ok(t) => Ok(vec![v.limited_trigger(t, x.span)?]),
                        Err(Abort::Failed) => Ok(Vec::new()),
                        Err(other) => Err(other),
                    }
                },
            )?;
            for t in terms {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            if choice + 1 >= self.member.trigger_choices {
                break; // no read had another chunk to name
            }
        }
        Ok(out)
    }

    fn never_pattern(
        &mut self,
        vars: &[(germanium_smt::Symbol, Sort)],
        span: germanium_syntax::Span,
    ) -> R<Vec<Term>> {
        let sorts: Vec<Sort> = vars.iter().map(|(_, s)| s.clone()).collect();
        let name =
            germanium_smt::Symbol::user(&format!("sx.never{}", self.decider.declared_count()));
        let decl = germanium_smt::FunDecl::new(name, sorts, Sort::Bool);
        self.ensure_declared(&decl, span)?;
        let args = vars
            .iter()
            .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
            .collect();
        Ok(vec![Term::app(&decl, args)])
    }

    /// A `let`'s value becomes a term the solver knows even when the body does not use it
    /// (as in Viper, which binds it to a fresh symbol): its applications can trigger
    /// axioms. Not in an axiom being translated (no fresh symbols there).
    fn name_let_value(&mut self, value: &Term, span: germanium_syntax::Span) -> R<()> {
        if self.modes.in_axiom || value.children().is_empty() {
            return Ok(());
        }
        let name = self.fresh("let", value.sort().clone(), span)?;
        self.assume(Term::eq(name, value.clone()), span)
    }

    /// `sets` with membership patterns also matching every element read by index (see
    /// `Theories::with_membership_triggers`).
    fn with_membership_triggers(&self, sets: Vec<Vec<Term>>) -> Vec<Vec<Term>> {
        match &self.env.theories {
            Some(theories) => theories.with_membership_triggers(sets),
            None => sets,
        }
    }

    fn limited_triggers(
        &mut self,
        sets: Vec<Vec<Term>>,
        span: germanium_syntax::Span,
    ) -> R<Vec<Vec<Term>>> {
        let mut out = Vec::new();
        for set in sets {
            let mut limited = Vec::new();
            for t in set {
                limited.push(self.limited_trigger(t, span)?);
            }
            out.push(limited);
        }
        Ok(out)
    }

    /// Evaluation during consumption: reads see `eval_heap` (the heap before the
    /// consumption), `perm(..)` sees what is left now.
    pub fn eval_consuming(
        &mut self,
        st: &State,
        eval_heap: &Heap,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        self.with_perm_heap(Some(st.heap.clone()), |v| v.eval(st, eval_heap, e, ctx))
    }
}

/// The element type of a collection type (Int for anything else, never used then).
pub fn element_type(ty: &Type) -> Type {
    match ty {
        Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => (**t).clone(),
        _ => Type::Int,
    }
}

fn map_types(ty: &Type) -> (Type, Type) {
    match ty {
        Type::Map(k, v) => ((**k).clone(), (**v).clone()),
        _ => (Type::Int, Type::Int),
    }
}
