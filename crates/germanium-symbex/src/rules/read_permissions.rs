//! Abstract read permissions (seed 003): what `rd`, `rdc(n)`, `rdw`, `rd_token(tk)`,
//! `rd_token_fresh(tk)` and `globalRd` evaluate to, the amounts chosen for calls and loops,
//! and the one decision their levels make.
//!
//! `rd` is the method's own amount, or the one chosen for the callee whose contract (or
//! the loop whose invariant and body) is being handled (`Modes::read_amount`); every such
//! amount is positive and below `write`. In function contracts `rd` is a wildcard and in
//! predicate bodies `globalRd` (the front end rewrites them).
//!
//! The decision, before an amount is taken from what is held: the linear form of
//! `held - amount` is made (see `state::read_levels`), less its positive read amounts of
//! levels below its smallest negative one (a smaller amount of the same highest level:
//! `1/4 - rd + rdc(1)` is above `1/4 - rd`). Where the form has read amounts and literals
//! only and is positive by orders of magnitude (its highest-level term positive, and able
//! to bound every negative amount by the table below), `held - amount > 0` is assumed.
//! Else, where its smallest read amount `v`
//! has a negative coefficient and everything else in it is of levels that may bound `v`
//! (the seed's table: anything larger for ε, fresh and `rdw` amounts; only `globalRd` and
//! constants for the method's `rd` and tokens; only constants for `globalRd`) and is
//! provably positive, `held - amount > 0` is assumed: `v` is taken to be small enough.
//! Levels are infinitesimal orders, each below the next, so every set of such upper
//! bounds can be met; nothing else about read amounts is assumed, and nothing branches
//! in the solver.

use germanium_smt::{Op, RealLit, Sort, Symbol, Term, TermKind};
use germanium_syntax::ast::{Expr, ExprKind, ReadPermKind};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::read_levels::{
    epsilon_decl, global_decl, token_decl, LinearAmount, ReadAmounts, ReadClass, ReadLevel,
};
use crate::state::{Heap, Permission, State};

/// Whether `x` as a whole amount is some positive amount chosen where it is taken or
/// given: `wildcard`, and `rdw` (which is one).
pub(crate) fn is_wildcard(x: &Expr) -> bool {
    matches!(
        x.kind,
        ExprKind::Wildcard | ExprKind::ReadPerm(ReadPermKind::Rdw)
    )
}

/// `0 < t < write`.
fn strictly_between(t: &Term) -> Term {
    Term::and([
        Term::gt(t.clone(), Permission::none().0),
        Term::lt(t.clone(), Permission::write().0),
    ])
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Makes the member's read-amount symbols with their bounds (where the program uses
    /// read permissions): the method's own `rd`, ε, `globalRd` and the tokens' amounts.
    pub(crate) fn start_read_permissions(&mut self, span: Span) -> R<()> {
        if !self.env.read_permissions {
            return Ok(());
        }
        let own = self.fresh("rd", Sort::Real, span)?;
        for decl in [epsilon_decl(), global_decl(), token_decl()] {
            self.ensure_declared(&decl, span)?;
        }
        let t = Term::var(Symbol::user("t"), Sort::named("Ref"));
        let at = Term::app(&token_decl(), vec![t.clone()]);
        let tokens = Term::forall(
            vec![(Symbol::user("t"), Sort::named("Ref"))],
            strictly_between(&at),
            vec![vec![at]],
        );
        for fact in [
            strictly_between(&own),
            strictly_between(&Term::constant(&epsilon_decl())),
            strictly_between(&Term::constant(&global_decl())),
            tokens,
        ] {
            self.assume(fact, span)?;
        }
        self.member.reads.own = Some(own);
        Ok(())
    }

    /// A new amount for a callee or a loop: positive, below `write`, smaller in level than
    /// every amount made before it (`None` where the program uses no read permissions).
    pub(crate) fn choose_read_amount(&mut self, span: Span) -> R<Option<Term>> {
        if !self.env.read_permissions {
            return Ok(None);
        }
        let t = self.fresh("rd", Sort::Real, span)?;
        self.assume(strictly_between(&t), span)?;
        self.member.reads.add_chosen(t.clone(), ReadClass::Fresh);
        Ok(Some(t))
    }

    /// The value of an abstract read permission.
    pub(crate) fn eval_read_perm(
        &mut self,
        st: &State,
        heap: &Heap,
        kind: &ReadPermKind,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if !self.env.read_permissions {
            return Err(self.unsupported(e.span, "abstract read permissions here"));
        }
        match kind {
            ReadPermKind::Rd => match (&self.modes.read_amount, &self.member.reads.own) {
                (Some(t), _) | (None, Some(t)) => Ok(t.clone()),
                (None, None) => Err(self.unsupported(e.span, "`rd` outside a method")),
            },
            ReadPermKind::GlobalRd => Ok(Term::constant(&global_decl())),
            ReadPermKind::Rdc(n) => {
                let n = self.eval(st, heap, n, ctx)?;
                Ok(Term::mul(vec![
                    Term::to_real(n),
                    Term::constant(&epsilon_decl()),
                ]))
            }
            ReadPermKind::Rdw => {
                // Inside a larger amount (as the whole amount it is a wildcard).
                let w = self.fresh("rdw", Sort::Real, e.span)?;
                self.assume(strictly_between(&w), e.span)?;
                self.member.reads.add_chosen(w.clone(), ReadClass::Wildcard);
                self.member.reads.born.push(w.clone());
                Ok(w)
            }
            ReadPermKind::RdToken(tk) | ReadPermKind::RdTokenFresh(tk) => {
                let tk = self.eval(st, heap, tk, ctx)?;
                let t = Term::app(&token_decl(), vec![tk]);
                if matches!(kind, ReadPermKind::RdTokenFresh(_)) {
                    self.member.reads.born.push(t.clone());
                }
                Ok(t)
            }
        }
    }

    /// Runs `f` (the taking of an amount whose evaluation began when `born` was the length
    /// of the born amounts) with the token amounts born since then bounded as fresh ones.
    pub(crate) fn with_born_reads<T>(
        &mut self,
        born: usize,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let new: Vec<Term> = self.member.reads.born_since(born).to_vec();
        if new.is_empty() {
            return f(self);
        }
        self.with_modes(|m| m.fresh_tokens.extend(new), f)
    }

    /// Before `needed` is taken from `held` (the location's whole amount): takes the
    /// smallest read amount in `held - needed` to be small enough, where the levels allow
    /// (see the module documentation).
    pub(crate) fn bound_read_amounts(
        &mut self,
        held: &Permission,
        needed: &Permission,
        span: Span,
    ) -> R<()> {
        self.bound_reads(held, needed, false, span)
    }

    /// Checks that `p` is not negative (`negative.permission`), with its smallest read
    /// amount first taken small enough where the levels allow (`1/2 - rd`).
    pub(crate) fn check_not_negative(
        &mut self,
        p: &Permission,
        ctx: &ErrorContext,
        x: &Expr,
    ) -> R<bool> {
        if self.positive_read_amount(p) {
            return Ok(true);
        }
        self.bound_read_amounts(p, &Permission::none(), x.span)?;
        self.check(
            p.is_non_negative(),
            ctx,
            crate::errors::Reason::NegativePermission,
            x,
        )
    }

    /// Whether `p` is positive by its shape: a sum of read amounts (each positive) and
    /// positive literals, without a query.
    pub(crate) fn positive_read_amount(&self, p: &Permission) -> bool {
        if !self.env.read_permissions {
            return false;
        }
        let mut form = LinearAmount::default();
        form.add(&self.member.reads, &p.0, &RealLit::integer(1.into())) && form.positive()
    }

    /// [`Verifier::bound_read_amounts`] at an arbitrary location of a quantified access
    /// (`held` there, under the guard that the access needs `needed` there): the bound is
    /// taken for every location at once, so it is taken only where what is held comes in
    /// finitely many amounts (literals and read symbols, not values per location), whose
    /// least positive one the chosen amount can be below.
    pub(crate) fn bound_read_amounts_everywhere(
        &mut self,
        held: &Permission,
        needed: &Permission,
        span: Span,
    ) -> R<()> {
        self.bound_reads(held, needed, true, span)
    }

    fn bound_reads(
        &mut self,
        held: &Permission,
        needed: &Permission,
        everywhere: bool,
        span: Span,
    ) -> R<()> {
        // Bounds are sound anywhere; axioms are made outside any member's amounts.
        if !self.env.read_permissions || self.modes.in_axiom {
            return Ok(());
        }
        let reads = &self.member.reads;
        let one = RealLit::integer(1.into());
        let mut left = LinearAmount::default();
        if !left.add(reads, &held.0, &one) || !left.add(reads, &needed.0, &one.negated()) {
            return Ok(());
        }
        let left = left.without_positive_below_negative(reads);
        // In shapes the take checks and leaves (`held >= needed`, `held - needed`), so
        // those checks find it literally.
        let fits = Term::and([held.at_least(needed), held.sub(needed).is_positive()]);
        if !everywhere && decided_by_the_highest_level(reads, &left, &self.modes.fresh_tokens) {
            return self.assume_guarded(fits, span);
        }
        let Some((v, coefficient, _)) = left.smallest(reads) else {
            return Ok(());
        };
        if !coefficient.is_negative() {
            return Ok(());
        }
        let Some(level) = level_of(reads, &v, &self.modes.fresh_tokens) else {
            return Ok(());
        };
        let rest = left.term_without(&v);
        if !may_bound(reads, level, &left.rest, &rest, everywhere) {
            return Ok(());
        }
        if left.positive_without(&v) || self.prove(Permission(rest).is_positive(), span)? {
            self.assume_guarded(fits, span)?;
        }
        Ok(())
    }
}

/// Whether `form` is positive by orders of magnitude, its sign being that of its term of
/// the highest level (constants above every read amount), and every read amount with a
/// negative coefficient is one that term may bound (the seed's table, as in [`may_bound`]):
/// `1/2 - rd - rdc(2)` is, `rdc(1) - rd` is not. Only forms of read amounts and literals:
/// another value may be anything positive, even a caller's read amount. Where it holds,
/// assuming the form positive bounds each negative amount by a larger level, which the
/// infinitesimal orders always allow together.
fn decided_by_the_highest_level(
    reads: &ReadAmounts,
    form: &LinearAmount,
    fresh_tokens: &[Term],
) -> bool {
    if !form.rest.is_empty() {
        return false;
    }
    let mut atoms = Vec::new();
    for (a, c) in form.atoms.iter().filter(|(_, c)| !c.is_zero()) {
        match level_of(reads, a, fresh_tokens) {
            Some(l) => atoms.push((l, c)),
            None => return false,
        }
    }
    let negative = || atoms.iter().filter(|(_, c)| c.is_negative());
    match form.constant.as_ref().filter(|c| !c.is_zero()) {
        // A constant is the highest term, and may bound every read amount.
        Some(c) => !c.is_negative(),
        None => match atoms.iter().max_by_key(|(l, _)| *l) {
            Some((top, c)) => !c.is_negative() && negative().all(|(l, _)| may_be_bounded(*l, *top)),
            None => false,
        },
    }
}

/// The level of the read amount `a`, a token born fresh (`Modes::fresh_tokens`) counting
/// as a fresh amount.
fn level_of(reads: &ReadAmounts, a: &Term, fresh_tokens: &[Term]) -> Option<ReadLevel> {
    reads.level(a).map(|mut l| {
        if fresh_tokens.contains(a) {
            l.class = ReadClass::Fresh;
        }
        l
    })
}

/// Whether a read amount of level `by` may bound one of `level` from above (the seed's
/// "checked above" column): anything larger for ε, fresh and `rdw` amounts; only
/// `globalRd` for the method's `rd` and tokens; nothing for `globalRd` (constants, which
/// bound everything, are not read amounts).
fn may_be_bounded(level: ReadLevel, by: ReadLevel) -> bool {
    by > level
        && match level.class {
            ReadClass::Epsilon | ReadClass::Fresh | ReadClass::Wildcard => true,
            ReadClass::Token | ReadClass::Context => by.class >= ReadClass::Global,
            ReadClass::Global => false,
        }
}

/// Whether `rest` (the part of an amount left besides the smallest read amount, of level
/// `level`; `opaque` its parts that are not linear) may bound that amount from above.
fn may_bound(
    reads: &ReadAmounts,
    level: ReadLevel,
    opaque: &[Term],
    rest: &Term,
    everywhere: bool,
) -> bool {
    let mut inside = Vec::new();
    reads.atoms_in(rest, &mut inside);
    let atoms_fit = inside
        .iter()
        .all(|a| reads.level(a).is_some_and(|l| may_be_bounded(level, l)));
    // A value that is not a read amount may be anything positive, even a read amount of
    // the caller's: only an amount chosen just now may be bounded by it.
    let chosen_now = !everywhere && matches!(level.class, ReadClass::Fresh | ReadClass::Wildcard);
    atoms_fit && (chosen_now || opaque.iter().all(|t| literal_valued(reads, t)))
}

/// Whether every amount in `t` is a literal or a read amount (`ite(x == y, 1/2, 0)`, the
/// amount of another chunk that may be the same location, is).
fn literal_valued(reads: &ReadAmounts, t: &Term) -> bool {
    if reads.level(t).is_some() || t.as_real().is_some() || t.as_int().is_some() {
        return true;
    }
    match t.kind() {
        TermKind::Op(Op::Ite, args) if args.len() == 3 => {
            literal_valued(reads, &args[1]) && literal_valued(reads, &args[2])
        }
        TermKind::Op(Op::Add | Op::Sub | Op::Mul | Op::Neg | Op::RealDiv | Op::ToReal, args) => {
            args.iter().all(|a| literal_valued(reads, a))
        }
        _ => false,
    }
}
