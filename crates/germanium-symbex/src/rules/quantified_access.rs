//! One access under a quantified permission (`c ==> acc(loc, p)` read at fresh constants
//! and over the bound variables), and what follows from its shape alone: patterns, explicit
//! inverses for arguments that are the variables or offsets of them, and the variables its
//! condition defines.

use std::collections::HashMap;

use germanium_smt::{substitute, Op, Sort, Symbol, Term, TermKind};
use germanium_syntax::ast::Expr;

use crate::resources;
use crate::rules::context::Verifier;
use crate::rules::triggers;
use crate::state::{Permission, Resource};

/// One `c ==> acc(loc, p)` under the quantifier, read at the fresh constants `at` and as
/// terms over the bound variables `vars`.
pub(crate) struct Access<'x> {
    pub resource: Resource,
    /// Where a missing permission is reported (`e.f`, or the predicate instance).
    pub loc: &'x Expr,
    pub amount_expr: Option<&'x Expr>,
    pub vars: Vec<(Symbol, Sort)>,
    pub at: Vec<Term>,
    pub cond: Term,
    /// The location's arguments (the receiver, or the predicate's arguments).
    pub args: Vec<Term>,
    /// The amount written (`write` when none is, or for `wildcard`).
    pub amount: Permission,
    /// Only some positive amount is meant where `amount` is positive (`wildcard`, or any
    /// amount inside a function).
    pub some: bool,
    pub triggers: Vec<Vec<Term>>,
}

impl Access<'_> {
    /// `t` (over the fresh constants) over the bound variables.
    pub fn to_vars(&self, t: &Term) -> Term {
        self.renamed(t, &var_terms(&self.vars))
    }

    /// `t` (over the fresh constants) with other terms in their place.
    pub fn renamed(&self, t: &Term, others: &[Term]) -> Term {
        let map: HashMap<Term, Term> = self
            .at
            .iter()
            .cloned()
            .zip(others.iter().cloned())
            .collect();
        substitute(t, &map)
    }

    /// Where the access holds some permission, over the fresh constants.
    pub fn positive(&self) -> Term {
        Term::and([self.cond.clone(), self.amount.is_positive()])
    }

    /// For each bound variable, an argument that determines it (`P(a, i)`, `P(a, i + 1)`)
    /// and how, when every bound variable has one: the location then names the instance,
    /// no inverse function is needed and the locations are injective.
    pub fn identity(&self) -> Option<Vec<(usize, Solved)>> {
        self.at
            .iter()
            .map(|x| {
                self.args
                    .iter()
                    .enumerate()
                    .find_map(|(i, a)| solve_for(a, x, &self.at).map(|s| (i, s)))
            })
            .collect()
    }

    /// A fact `t` about the instances (over the bound variables) and its patterns. Where an
    /// argument offsets a variable (`loc(a, i + 1)`) and the program gives no triggers, the
    /// variable is renamed to the offset value, so the pattern is an application to
    /// variables (`loc(a, i)`) that matches ground terms such as `loc(a, 1)` (arithmetic in
    /// a pattern only matches the same arithmetic). The same formula: an offset is a
    /// bijection of the integers.
    pub fn fact_with_patterns(&self, t: &Term) -> (Term, Vec<Vec<Term>>) {
        if self.triggers.is_empty() {
            let vars = var_terms(&self.vars);
            let args: Vec<Term> = self.args.iter().map(|a| self.to_vars(a)).collect();
            // (variable, the argument term that offsets it, the variable in its terms)
            let offsets: Vec<(&Term, Term, Term)> = vars
                .iter()
                .filter_map(|v| {
                    let (offset, solved) = args.iter().find_map(|a| offset_of(a, v, &vars))?;
                    (!matches!(solved, Solved::Same)).then(|| (v, offset, solved.at(v)))
                })
                .collect();
            let rename = |t: &Term| {
                offsets.iter().fold(t.clone(), |out, (v, offset, back)| {
                    let placeholder = Term::var(Symbol::user("sx.offset"), v.sort().clone());
                    let steps = [
                        (offset.clone(), placeholder.clone()),
                        ((*v).clone(), back.clone()),
                        (placeholder, (*v).clone()),
                    ];
                    steps.into_iter().fold(out, |out, (from, to)| {
                        substitute(&out, &HashMap::from([(from, to)]))
                    })
                })
            };
            if !offsets.is_empty() {
                let renamed: Vec<Term> = args.iter().map(rename).collect();
                let patterns = triggers::infer_in(&self.symbols(), &renamed);
                if !patterns.is_empty() {
                    return (rename(t), patterns);
                }
            }
        }
        (t.clone(), self.patterns())
    }

    /// The terms `ts` (over the bound variables) at the locations `rs`, for an access whose
    /// arguments include its variables at `positions`, with the condition that the other
    /// arguments are those at `rs` too.
    pub fn projected<const N: usize>(
        &self,
        ts: [&Term; N],
        positions: &[(usize, Solved)],
        rs: &[Term],
    ) -> ([Term; N], Term) {
        let map: HashMap<Term, Term> = var_terms(&self.vars)
            .into_iter()
            .zip(positions.iter().map(|(i, solved)| solved.at(&rs[*i])))
            .collect();
        let args: Vec<Term> = self
            .args
            .iter()
            .map(|a| substitute(&self.to_vars(a), &map))
            .collect();
        (
            ts.map(|t| substitute(t, &map)),
            resources::same_args(&args, rs),
        )
    }

    /// The arguments with each constant the condition defines (`j == i + 1`) replaced by
    /// its definition: equal to `args` where the condition holds, and with the terms that
    /// the program's facts about `i` are triggered on.
    pub(crate) fn args_as_defined(&self) -> Vec<Term> {
        let mut defs: HashMap<Term, Term> = HashMap::new();
        for conjunct in conjuncts(&self.cond) {
            let TermKind::Op(Op::Eq, sides) = conjunct.kind() else {
                continue;
            };
            for (x, t) in [(&sides[0], &sides[1]), (&sides[1], &sides[0])] {
                // A definition mentions no constant defined already (so none is circular).
                let acyclic = !defs.contains_key(x)
                    && self
                        .at
                        .iter()
                        .all(|a| !triggers::mentions(t, a) || (a != x && !defs.contains_key(a)));
                if self.at.contains(x) && acyclic {
                    defs.insert(x.clone(), t.clone());
                    break;
                }
            }
        }
        let mut args = self.args.clone();
        for _ in 0..defs.len() {
            args = args.iter().map(|a| substitute(a, &defs)).collect();
        }
        args
    }

    /// The bound variables' names.
    pub(crate) fn symbols(&self) -> Vec<Symbol> {
        self.vars.iter().map(|(v, _)| v.clone()).collect()
    }

    /// Patterns for a fact about the instances (over the bound variables): the program's
    /// triggers, else ones inferred from the arguments, else from the arguments and the
    /// condition (a receiver read from the heap); none if nothing fits.
    pub fn patterns(&self) -> Vec<Vec<Term>> {
        if !self.triggers.is_empty() {
            return self.triggers.clone();
        }
        let symbols = self.symbols();
        let mut parts: Vec<Term> = self.args.iter().map(|a| self.to_vars(a)).collect();
        let from_args = triggers::infer_in(&symbols, &parts);
        if !from_args.is_empty() {
            return from_args;
        }
        parts.push(self.to_vars(&self.cond));
        triggers::infer_in(&symbols, &parts)
    }

    /// The amount, where it is the same at every location (mentions none of the
    /// variables): read amounts in it may be bounded for all locations at once.
    pub(crate) fn uniform_amount(&self) -> Option<&Permission> {
        let varies = self
            .at
            .iter()
            .any(|a| triggers::mentions(&self.amount.0, a));
        (!varies).then_some(&self.amount)
    }

    /// Whether the resource is a field (whose receivers are not null where held).
    pub(crate) fn is_field(&self) -> bool {
        matches!(self.resource, Resource::Field(_))
    }
}

/// How `x` follows from the value of `arg` when `arg` is `x` or `x` plus or minus terms
/// that mention none of `bound`.
fn solve_for(arg: &Term, x: &Term, bound: &[Term]) -> Option<Solved> {
    let free = |t: &Term| bound.iter().all(|a| !triggers::mentions(t, a));
    if arg == x {
        return Some(Solved::Same);
    }
    match arg.kind() {
        TermKind::Op(Op::Add, parts) => {
            let (mine, rest): (Vec<&Term>, Vec<&Term>) = parts.iter().partition(|p| *p == x);
            (mine.len() == 1 && rest.iter().all(|t| free(t)))
                .then(|| Solved::Minus(Term::add(rest.into_iter().cloned().collect())))
        }
        TermKind::Op(Op::Sub, parts) if parts.len() == 2 => {
            if &parts[0] == x && free(&parts[1]) {
                Some(Solved::Plus(parts[1].clone()))
            } else if &parts[1] == x && free(&parts[0]) {
                Some(Solved::From(parts[0].clone()))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The first subterm of `t` (outermost first) that determines `x` (see [`solve_for`]),
/// with how.
fn offset_of(t: &Term, x: &Term, bound: &[Term]) -> Option<(Term, Solved)> {
    if let Some(solved) = solve_for(t, x, bound) {
        return Some((t.clone(), solved));
    }
    t.children()
        .into_iter()
        .find_map(|c| offset_of(c, x, bound))
}

/// How a bound variable follows from the value `r` of an argument (see
/// [`Access::identity`]).
#[derive(Clone, Debug)]
pub(crate) enum Solved {
    /// `r`.
    Same,
    /// `r - k`.
    Minus(Term),
    /// `r + k`.
    Plus(Term),
    /// `k - r`.
    From(Term),
}

impl Solved {
    fn at(&self, r: &Term) -> Term {
        match self {
            Solved::Same => r.clone(),
            Solved::Minus(k) => Term::sub(r.clone(), k.clone()),
            Solved::Plus(k) => Term::add(vec![r.clone(), k.clone()]),
            Solved::From(k) => Term::sub(k.clone(), r.clone()),
        }
    }
}

/// The applications in `t` of declared functions with each of the terms `r` among their
/// arguments (the inverses in an amount at the locations `r`, or conditions such as
/// `r in xs`), each once, outermost first.
pub(crate) fn applications_at(t: &Term, r: &[Term]) -> Vec<Term> {
    fn walk(t: &Term, r: &[Term], out: &mut Vec<Term>) {
        if let TermKind::App(_, args) = t.kind() {
            let at_r = r.iter().all(|x| args.contains(x));
            if at_r && triggers::pattern_safe(t) && !out.contains(t) {
                out.push(t.clone());
            }
        }
        for c in t.children() {
            walk(c, r, out);
        }
    }
    let mut out = Vec::new();
    walk(t, r, &mut out);
    out
}

/// The conjuncts of `t` (nested conjunctions flattened).
fn conjuncts(t: &Term) -> Vec<&Term> {
    match t.kind() {
        TermKind::Op(Op::And, parts) => parts.iter().flat_map(conjuncts).collect(),
        _ => vec![t],
    }
}

/// Fresh variables, one per location argument of `sorts`.
pub(crate) fn location_vars(v: &mut Verifier, sorts: &[Sort]) -> Vec<(Symbol, Sort)> {
    sorts
        .iter()
        .map(|s| (v.decider.fresh_symbol("sx.q.r"), s.clone()))
        .collect()
}

pub(crate) fn var_terms(vars: &[(Symbol, Sort)]) -> Vec<Term> {
    vars.iter()
        .map(|(v, s)| Term::var(v.clone(), s.clone()))
        .collect()
}
