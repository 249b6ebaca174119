//! Resources: the only code that looks inside a chunk. One chunk shape for every kind of
//! resource (a field of an object, a predicate instance; quantified and wand chunks next)
//! and one path for each operation on it: find the chunk of a location, how much of it the
//! heap holds (`perm`), its value, add an amount, take an amount (from one chunk or spread
//! over several that may be the location), write and havoc its value.
//!
//! A location's permission may be spread over several chunks whose arguments may be equal
//! (after `acc(x.f) && (x != y ==> acc(y.f))`): amounts are summed over all chunks of the
//! resource, reads pick the value of a chunk that is the location and holds some of it,
//! writes update every chunk that may be it, and taking goes greedily from each.
//!
//! Architecture invariant: every decision that needs the solver goes through the
//! [`Decider`], under the guard the caller passes; nothing here reports errors (solver
//! failures are returned) or reads the syntax tree.

mod join;
mod linear;
mod location;
mod views;

use std::collections::{HashMap, HashSet};

use germanium_smt::{substitute, FunDecl, Op, SolverError, Sort, Symbol, Term, TermKind};

use crate::decider::Decider;
use crate::env::Env;
use crate::state::{Chunk, Heap, Owners, Permission, Resource};
use location::{amount_for, is_location, take_for, value_for, write_for};

pub use join::{join, join_value, Definitions};
pub use views::chunk_views;

/// Whether two argument lists are the same terms (the solver's `=`).
pub fn same_args(a: &[Term], b: &[Term]) -> Term {
    Term::and(a.iter().zip(b).map(|(x, y)| Term::eq(x.clone(), y.clone())))
}

/// Whether two argument lists name the same location as Viper values: a predicate's
/// collection arguments and a wand's collection holes compare extensionally (as `==`
/// does), so `Multiset() union Multiset(x)` names the same instance as `Multiset(x)`.
pub fn equal_args(env: &Env, resource: &Resource, a: &[Term], b: &[Term]) -> Term {
    match resource {
        Resource::Field(_) => same_args(a, b),
        Resource::Wand(_) => match &env.theories {
            Some(t) => Term::and(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| t.equal_values(x.clone(), y.clone()))
                    .collect::<Vec<_>>(),
            ),
            None => same_args(a, b),
        },
        Resource::Predicate(name) => {
            let params = env
                .sem
                .predicates
                .get(name)
                .map(|p| p.params.clone())
                .unwrap_or_default();
            let parts = a.iter().zip(b).enumerate().map(|(i, (x, y))| {
                let ty = params.get(i).map(|v| env.sem.var(*v).ty.clone());
                match (ty, &env.theories) {
                    (Some(ty), Some(t)) => t
                        .equal(&ty, x.clone(), y.clone())
                        .unwrap_or_else(|_| Term::eq(x.clone(), y.clone())),
                    _ => Term::eq(x.clone(), y.clone()),
                }
            });
            Term::and(parts.collect::<Vec<_>>())
        }
    }
}

/// Whether `fact` holds on the current path under `guard`.
fn proves(decider: &mut Decider, guard: &Term, fact: Term) -> Result<bool, SolverError> {
    let goal = Term::implies(guard.clone(), fact);
    if goal.is_true() {
        return Ok(true);
    }
    decider.refutes(&Term::not(goal))
}

/// [`proves`] for a shortcut question (see [`Decider::refutes_cheaply`]).
pub fn proves_cheaply(
    decider: &mut Decider,
    guard: &Term,
    fact: Term,
) -> Result<bool, SolverError> {
    let goal = Term::implies(guard.clone(), fact);
    Ok(goal.is_true() || decider.refutes_cheaply(&Term::not(goal))?)
}

/// The chunk of `resource(args)`: a syntactic match first, then one whose arguments the
/// solver proves equal (under `guard`).
pub fn find(
    decider: &mut Decider,
    env: &Env,
    heap: &Heap,
    resource: &Resource,
    args: &[Term],
    guard: &Term,
) -> Result<Option<usize>, SolverError> {
    find_unless(decider, env, heap, resource, args, guard, |_| false)
}

/// The chunk `amount` of `resource(args)` can be merged into: as [`find`], but a candidate
/// that cannot be the location is not asked about. Where the resource allows at most
/// `write` per location and both the candidate and the new amount are all or nothing, the
/// two are different locations wherever both hold something (what [`add`] assumes next),
/// so merging them gains nothing: a separate chunk is as precise, and the solver query it
/// saves is one per chunk of the field (a walk down a list asked about every earlier node).
fn find_to_merge(
    decider: &mut Decider,
    env: &Env,
    heap: &Heap,
    resource: &Resource,
    args: &[Term],
    amount: &Permission,
    guard: &Term,
) -> Result<Option<usize>, SolverError> {
    let exclusive = resource.max_amount().is_some() && amount.is_all_or_nothing();
    find_unless(decider, env, heap, resource, args, guard, |c| {
        exclusive && c.perm.is_all_or_nothing()
    })
}

/// [`find`] without asking about the candidates `decided` says cannot be the location.
fn find_unless(
    decider: &mut Decider,
    env: &Env,
    heap: &Heap,
    resource: &Resource,
    args: &[Term],
    guard: &Term,
    decided: impl Fn(&Chunk) -> bool,
) -> Result<Option<usize>, SolverError> {
    if let Some(i) = heap.find_syntactic(resource, args) {
        return Ok(Some(i));
    }
    // Newest first: a location just made (a node reached by a walk) is usually the one
    // looked up next.
    let candidates: Vec<usize> = heap.of(resource).collect();
    for i in candidates.into_iter().rev() {
        // A quantified chunk is every location, none in particular.
        if heap.chunks[i].is_quantified() || decided(&heap.chunks[i]) {
            continue;
        }
        let same = equal_args(env, resource, args, &heap.chunks[i].args);
        if proves(decider, guard, same)? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `perm(resource(args))` in `heap`: the sum over the chunks that are the location.
pub fn perm_of(heap: &Heap, resource: &Resource, args: &[Term]) -> Permission {
    let mut parts = vec![Permission::none().0];
    for i in heap.of(resource) {
        let c = &heap.chunks[i];
        let amount = amount_for(c, args).0;
        parts.push(Term::ite(
            is_location(c, args),
            amount,
            Permission::none().0,
        ));
    }
    Permission(Term::add(parts))
}

/// What a heap holds of one location, as the rules see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    /// Where the heap keeps it (for [`amount_at`] and friends).
    pub index: usize,
    pub resource: Resource,
    pub args: Vec<Term>,
    pub snap: Term,
    pub perm: Permission,
}

/// Everything `heap` holds location by location, of `resource` only if given, in heap
/// order. Quantified chunks are not listed: a rule that must see every location asks
/// [`holds_quantified`] first.
pub fn held(heap: &Heap, resource: Option<&Resource>) -> Vec<Held> {
    heap.chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.is_quantified())
        .filter(|(_, c)| match resource {
            Some(r) => c.resource == *r,
            None => true,
        })
        .map(|(index, c)| Held {
            index,
            resource: c.resource.clone(),
            args: c.args.clone(),
            snap: c.snap.clone(),
            perm: c.perm.clone(),
        })
        .collect()
}

/// Whether `heap` holds quantified chunks (of `resource` only, if given).
pub fn holds_quantified(heap: &Heap, resource: Option<&Resource>) -> bool {
    heap.chunks
        .iter()
        .any(|c| c.is_quantified() && resource.is_none_or(|r| c.resource == *r))
}

/// Whether the chunk at `index` is the only chunk of its resource in `heap` (so no other
/// chunk may hold its location).
pub fn alone_of_its_resource(heap: &Heap, index: usize) -> bool {
    heap.of(&heap.chunks[index].resource).count() == 1
}

/// The index of the one chunk of `resource`, if there is exactly one and it is quantified.
pub fn sole_quantified(heap: &Heap, resource: &Resource) -> Option<usize> {
    let mut of = heap.of(resource);
    match (of.next(), of.next()) {
        (Some(i), None) if heap.chunks[i].is_quantified() => Some(i),
        _ => None,
    }
}

/// Adds a quantified chunk of `resource`: `perm` and `snap` (its permission and value
/// maps) are over `vars`, one per argument (their facts were assumed by the caller).
pub fn add_quantified(
    heap: &mut Heap,
    resource: &Resource,
    vars: Vec<(Symbol, Sort)>,
    snap: Term,
    perm: Permission,
) {
    heap.push(Chunk::quantified(resource.clone(), vars, snap, perm));
}

/// Takes `needed` (an amount over the variables `vars`, per location) of `resource` from
/// the chunks that hold it, in heap order, each giving what it holds up to what is still
/// needed (the caller has proved that they hold enough together). Every map this makes is
/// a fresh function defined by a quantified fact, so repeated takes keep terms small (the
/// maps would otherwise repeat each other and grow exponentially).
pub fn take_quantified(
    decider: &mut Decider,
    heap: &mut Heap,
    resource: &Resource,
    vars: &[(Symbol, Sort)],
    needed: &Permission,
) -> Result<(), SolverError> {
    let rs: Vec<Term> = vars
        .iter()
        .map(|(v, sort)| Term::var(v.clone(), sort.clone()))
        .collect();
    let min = |a: &Permission, b: &Permission| {
        Permission(Term::ite(a.at_most(b), a.0.clone(), b.0.clone()))
    };
    let mut remaining = name_map(decider, vars, needed)?;
    let indices: Vec<usize> = heap.of(resource).collect();
    for i in indices {
        let chunk = heap.chunks[i].clone();
        if chunk.is_quantified() {
            // Both maps over `rs`, the chunk's own variables put back after.
            let to_r: HashMap<Term, Term> =
                chunk.args.iter().cloned().zip(rs.iter().cloned()).collect();
            let held = Permission(substitute(&chunk.perm.0, &to_r));
            let taken = min(&held, &remaining);
            let left = name_map(decider, vars, &held.sub(&taken))?;
            let back: HashMap<Term, Term> =
                rs.iter().cloned().zip(chunk.args.iter().cloned()).collect();
            heap.chunks[i].perm = Permission(substitute(&left.0, &back));
            remaining = name_map(decider, vars, &remaining.sub(&taken))?;
        } else {
            let at: HashMap<Term, Term> =
                rs.iter().cloned().zip(chunk.args.iter().cloned()).collect();
            let wanted = Permission(substitute(&remaining.0, &at));
            let taken = min(&chunk.perm, &wanted);
            let here = same_args(&rs, &chunk.args);
            let rest = remaining.sub(&Permission(Term::ite(
                here,
                taken.0.clone(),
                Permission::none().0,
            )));
            remaining = name_map(decider, vars, &rest)?;
            // What is left is dropped where it is proved none: a chunk kept with an
            // amount that is none in fact only lengthens every later term of the location.
            let left = chunk.perm.sub(&taken);
            let exhausted = !taken.is_literally_none()
                && !left.is_literally_none()
                && decider.refutes_cheaply(&left.is_positive())?;
            heap.chunks[i].perm = if exhausted { Permission::none() } else { left };
        }
    }
    heap.drop_empty();
    Ok(())
}

/// The quantified chunks of `resource` made for some of the constants `needed` names, the
/// most shared first (where a quantified amount is likely to be taken from as a whole).
pub fn likely_sources(heap: &Heap, resource: &Resource, needed: &Term) -> Vec<usize> {
    let mut wanted = Vec::new();
    crate::state::heap::constants_in(needed, &mut wanted);
    let mut scored: Vec<(usize, usize)> = heap
        .of(resource)
        .filter(|&i| heap.chunks[i].is_quantified())
        .map(|i| {
            let shared = heap.chunks[i]
                .made_for
                .iter()
                .filter(|c| wanted.contains(c))
                .count();
            (shared, i)
        })
        .filter(|(shared, _)| *shared > 0)
        .collect();
    // Most shared first; among equals the newest.
    scored.sort_by(|a, b| b.cmp(a));
    scored.into_iter().map(|(_, i)| i).collect()
}

/// How much the chunk at `index` holds of `args`.
pub fn amount_at_location(heap: &Heap, index: usize, args: &[Term]) -> Permission {
    amount_for(&heap.chunks[index], args)
}

/// The amount the quantified chunk at `index` holds wherever it holds any, when that is
/// one term free of its variables (its map is `ite(c, p, none)` or `p`): what it holds
/// compared as a constant.
pub fn uniform_amount(heap: &Heap, index: usize) -> Option<Permission> {
    let chunk = &heap.chunks[index];
    if !chunk.is_quantified() {
        return None;
    }
    let vars: HashSet<Term> = chunk
        .vars
        .iter()
        .map(|(v, sort)| Term::var(v.clone(), sort.clone()))
        .collect();
    let p = match chunk.perm.0.kind() {
        TermKind::Op(Op::Ite, parts) if parts.len() == 3 && parts[2] == Permission::none().0 => {
            parts[1].clone()
        }
        _ => chunk.perm.0.clone(),
    };
    (!p.mentions_any(&vars)).then_some(Permission(p))
}

/// Takes `needed` (over `vars`, per location; the caller has proved the chunk holds it)
/// from the quantified chunk at `index` only.
pub fn take_quantified_from(
    decider: &mut Decider,
    heap: &mut Heap,
    index: usize,
    vars: &[(Symbol, Sort)],
    needed: &Permission,
) -> Result<(), SolverError> {
    let chunk = &heap.chunks[index];
    let to_chunk: HashMap<Term, Term> = vars
        .iter()
        .map(|(v, sort)| Term::var(v.clone(), sort.clone()))
        .zip(chunk.args.iter().cloned())
        .collect();
    let chunk_vars = chunk.vars.clone();
    let left = chunk
        .perm
        .sub(&Permission(substitute(&needed.0, &to_chunk)));
    heap.chunks[index].perm = name_map(decider, &chunk_vars, &left)?;
    heap.drop_empty();
    Ok(())
}

/// A fresh function `m` with `forall vars :: m(vars) == map` assumed, applied to `vars`; a
/// map that is a literal stays as it is.
fn name_map(
    decider: &mut Decider,
    vars: &[(Symbol, Sort)],
    map: &Permission,
) -> Result<Permission, SolverError> {
    if map.0.as_real().is_some() {
        return Ok(map.clone());
    }
    let f = FunDecl::new(
        decider.fresh_symbol("qperm"),
        vars.iter().map(|(_, s)| s.clone()).collect(),
        Sort::Real,
    );
    decider.declare(&f)?;
    let applied = Term::app(
        &f,
        vars.iter()
            .map(|(v, s)| Term::var(v.clone(), s.clone()))
            .collect(),
    );
    let definition = Term::forall(
        vars.to_vec(),
        Term::eq(applied.clone(), map.0.clone()),
        vec![vec![applied.clone()]],
    );
    decider.assume(definition)?;
    Ok(Permission(applied))
}

/// Adds the quantified chunks of `from` to `into` as they are (a frame set aside and
/// given back: what was assumed of them when they were made still holds).
pub fn copy_quantified(from: &Heap, into: &mut Heap) {
    for c in from.chunks.iter().filter(|c| c.is_quantified()) {
        into.push(c.clone());
    }
}

/// The amount held by the chunk at `index` (from [`find`] or [`held`]).
pub fn amount_at(heap: &Heap, index: usize) -> &Permission {
    &heap.chunks[index].perm
}

/// The snapshot (a field's value) of the chunk at `index`.
pub fn snapshot_at(heap: &Heap, index: usize) -> &Term {
    &heap.chunks[index].snap
}

/// Gives the chunk at `index` the snapshot `value` (a write with full permission).
pub fn set_snapshot_at(heap: &mut Heap, index: usize, value: Term) {
    heap.chunks[index].snap = value;
}

/// Takes `amount` from the chunk at `index` (which holds enough) and returns its snapshot;
/// a chunk left with literally nothing is dropped.
pub fn take_at(heap: &mut Heap, index: usize, amount: &Permission) -> Term {
    let chunk = &mut heap.chunks[index];
    chunk.perm = chunk.perm.sub(amount);
    let snap = chunk.snap.clone();
    heap.drop_empty();
    snap
}

/// `top`'s chunks followed by `below`'s: a view for reading where `top` is consulted
/// first (a lookup finds `top`'s chunk of a location before `below`'s).
pub fn stacked(top: &Heap, below: &Heap) -> Heap {
    let mut view = top.clone();
    for c in &below.chunks {
        view.push(c.clone());
    }
    view
}

/// Removes the chunk at `index` (a copy of the heap without one instance).
pub fn remove_at(heap: &mut Heap, index: usize) {
    heap.chunks.remove(index);
}

/// How many chunks `heap` has (what was added after this count is new).
pub fn count(heap: &Heap) -> usize {
    heap.chunks.len()
}

/// The value of `resource(args)` from whichever chunk is it and holds some of it;
/// `otherwise` (an unconstrained value) if none does.
pub fn value_of(heap: &Heap, resource: &Resource, args: &[Term], otherwise: Term) -> Term {
    let mut value = otherwise;
    let indices: Vec<usize> = heap.of(resource).collect();
    for i in indices.into_iter().rev() {
        let c = &heap.chunks[i];
        let holds = Term::and([is_location(c, args), amount_for(c, args).is_positive()]);
        value = Term::ite(holds, value_for(c, args), value);
    }
    value
}

/// The value at `args` of the oldest quantified chunk of `resource`, if there is one (a
/// definitional axiom's choice of the value of a location no chunk is known to hold: an
/// unconstrained value may be any term, and this one mentions only the axiom's snapshot).
pub fn quantified_value(heap: &Heap, resource: &Resource, args: &[Term]) -> Option<Term> {
    heap.of(resource)
        .map(|i| &heap.chunks[i])
        .find(|c| c.is_quantified())
        .map(|c| value_for(c, args))
}

/// The value maps at `args` of the quantified chunks of `resource`, newest first, each
/// without the writes made since it was produced (what a trigger on a read of the
/// location should match).
pub fn quantified_value_maps(heap: &Heap, resource: &Resource, args: &[Term]) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    let indices: Vec<usize> = heap.of(resource).collect();
    for i in indices.into_iter().rev() {
        let c = &heap.chunks[i];
        if !c.is_quantified() {
            continue;
        }
        let mut value = value_for(c, args);
        while let germanium_smt::TermKind::Op(germanium_smt::Op::Ite, parts) = value.kind() {
            value = parts[2].clone();
        }
        if !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

/// The value the chunk at `index` has at `args`.
pub fn value_at_location(heap: &Heap, index: usize, args: &[Term]) -> Term {
    value_for(&heap.chunks[index], args)
}

/// Writes `value` to `resource(args)` in every chunk that may be that location.
pub fn write(heap: &mut Heap, resource: &Resource, args: &[Term], value: &Term) {
    let indices: Vec<usize> = heap.of(resource).collect();
    for i in indices {
        write_for(&mut heap.chunks[i], args, value);
    }
}

/// Gives the chunk at `index` the value `fresh` where `hit` holds, and keeps its value
/// elsewhere (havoc).
pub fn havoc_at(heap: &mut Heap, index: usize, hit: &Term, fresh: &Term) {
    let c = &mut heap.chunks[index];
    c.snap = Term::ite(hit.clone(), fresh.clone(), c.snap.clone());
}

/// Gives every quantified chunk of `resource` the value `fresh` where `hit` holds (both
/// over `vars`, one per argument), keeping its values elsewhere (havoc).
pub fn havoc_quantified(
    heap: &mut Heap,
    resource: &Resource,
    vars: &[(Symbol, Sort)],
    hit: &Term,
    fresh: &Term,
) {
    let indices: Vec<usize> = heap.of(resource).collect();
    for i in indices {
        let c = &mut heap.chunks[i];
        if !c.is_quantified() {
            continue;
        }
        let to_chunk: HashMap<Term, Term> = vars
            .iter()
            .map(|(v, sort)| Term::var(v.clone(), sort.clone()))
            .zip(c.args.iter().cloned())
            .collect();
        c.snap = Term::ite(
            substitute(hit, &to_chunk),
            substitute(fresh, &to_chunk),
            c.snap.clone(),
        );
    }
}

/// Takes from every chunk of `resource` that may be `args`: `take` gets whether a chunk is
/// the location and its amount, and says how much of it goes. With `otherwise`, returns the
/// location's snapshot: that of a chunk that is it and holds some of it (under `when`),
/// else `otherwise`.
pub fn take_from_all<E>(
    heap: &mut Heap,
    resource: &Resource,
    args: &[Term],
    when: &Term,
    otherwise: Option<Term>,
    mut take: impl FnMut(Term, &Permission) -> Result<Permission, E>,
) -> Result<Option<Term>, E> {
    let mut snap = otherwise;
    let indices: Vec<usize> = heap.of(resource).collect();
    for i in indices {
        let c = &heap.chunks[i];
        let same = is_location(c, args);
        let amount = amount_for(c, args);
        if let Some(s) = snap {
            let holds = Term::and([when.clone(), same.clone(), amount.is_positive()]);
            snap = Some(Term::ite(holds, value_for(c, args), s));
        }
        let taken = take(same, &amount)?;
        take_for(&mut heap.chunks[i], args, &taken);
    }
    heap.drop_empty();
    Ok(snap)
}

/// Takes `amount` of `resource(args)` greedily from the chunks that may hold it (the caller
/// has proved that they hold enough together).
pub fn take_greedily(heap: &mut Heap, resource: &Resource, args: &[Term], amount: &Permission) {
    take_greedily_with_snapshot(heap, resource, args, amount, None);
}

/// [`take_greedily`], returning the location's snapshot (see [`take_from_all`]) when
/// `otherwise` is given.
pub fn take_greedily_with_snapshot(
    heap: &mut Heap,
    resource: &Resource,
    args: &[Term],
    amount: &Permission,
    otherwise: Option<Term>,
) -> Option<Term> {
    let mut remaining = amount.clone();
    let taken = take_from_all(
        heap,
        resource,
        args,
        &Term::tt(),
        otherwise,
        |same, perm| -> Result<Permission, std::convert::Infallible> {
            let available = Permission(Term::ite(same, perm.0.clone(), Permission::none().0));
            let taken = Permission(Term::ite(
                available.at_least(&remaining),
                remaining.0.clone(),
                available.0.clone(),
            ));
            remaining = remaining.sub(&taken);
            Ok(taken)
        },
    );
    match taken {
        Ok(snap) => snap,
        Err(never) => match never {},
    }
}

/// The base of fresh names for values of `resource`.
fn fresh_base(resource: &Resource) -> String {
    match resource {
        Resource::Field(f) => f.clone(),
        Resource::Predicate(p) => format!("snap.{p}"),
        Resource::Wand(_) => "wand".to_string(),
    }
}

/// How [`add`] says that receivers held in full at once differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinctness {
    /// One label per chunk (see [`Owners`]): linear in the number of chunks.
    Labels,
    /// One fact per pair, for facts that must mention nothing but the chunks (the
    /// premises of a function's definitional axiom).
    Pairs,
}

/// What [`add`] adds: `amount` of `resource(args)` with snapshot `snap` (a fresh one of
/// `sort` when none).
pub struct Addition<'r> {
    pub resource: &'r Resource,
    pub args: Vec<Term>,
    pub amount: Permission,
    pub snap: Option<Term>,
    pub sort: &'r Sort,
}

/// Adds `amount` of `resource(args)` whose snapshot is `snap` (`None`: unknown, a fresh
/// value of `sort`), merging with a chunk of the same location. Locations that turn out to
/// be the same have the same value, and no state holds more of one location than the
/// resource allows ([`Resource::max_amount`]); a quantified chunk counts at `args` with its
/// amount and value there.
pub fn add(
    decider: &mut Decider,
    env: &Env,
    heap: &mut Heap,
    addition: Addition,
    guard: &Term,
    distinctness: Distinctness,
) -> Result<(), SolverError> {
    let Addition {
        resource,
        args,
        amount,
        snap,
        sort,
    } = addition;
    if amount.is_literally_none() {
        return Ok(());
    }
    let max = resource.max_amount();
    let holds_wand = matches!(resource, Resource::Predicate(p) if env.wand_predicates.contains(p));
    if !resource.values_agree() || holds_wand {
        // Its own chunk: instances of one wand need not have the same snapshot (nor need
        // instances of a predicate holding one).
        let snap = match snap {
            Some(v) => v,
            None => decider.fresh(&fresh_base(resource), sort.clone())?,
        };
        heap.push(Chunk::at(resource.clone(), args, snap, amount));
        return Ok(());
    }
    if let Some(i) = find_to_merge(decider, env, heap, resource, &args, &amount, guard)? {
        let old = heap.chunks[i].clone();
        if let Some(v) = &snap {
            let both = Term::and([old.perm.is_positive(), amount.is_positive()]);
            decider.assume(Term::implies(both, Term::eq(v.clone(), old.snap.clone())))?;
        }
        if !proves_cheaply(decider, guard, old.perm.is_positive())? {
            let v = match snap {
                Some(v) => v,
                None => decider.fresh(&fresh_base(resource), sort.clone())?,
            };
            // The old value where the old chunk held something (both agree where both do),
            // the new one elsewhere: nothing is assumed of a value whose amount is none
            // (e.g. the other branch of a conditional assertion's snapshot).
            heap.chunks[i].snap = Term::ite(old.perm.is_positive(), old.snap.clone(), v);
        }
        let total = old.perm.add(&amount);
        if let Some(max) = &max {
            decider.assume(total.at_most(max))?;
        }
        heap.chunks[i].perm = total;
        return Ok(());
    }
    let snap = match snap {
        Some(v) => v,
        None => decider.fresh(&fresh_base(resource), sort.clone())?,
    };
    if let Some(max) = &max {
        decider.assume(amount.at_most(max))?;
    }
    let full = distinctness == Distinctness::Labels && max.as_ref().is_some_and(|m| amount == *m);
    let others: Vec<Chunk> = heap.of(resource).map(|j| heap.chunks[j].clone()).collect();
    for other in others {
        if full && !other.is_quantified() && Some(&other.perm) == max.as_ref() {
            // Told apart by the owner labels below.
            continue;
        }
        let same = is_location(&other, &args);
        let other_amount = amount_for(&other, &args);
        if let Some(max) = &max {
            let too_much = Term::gt(amount.add(&other_amount).0, max.0.clone());
            let distinct = too_much.is_true();
            decider.assume(Term::implies(too_much, Term::not(same.clone())))?;
            if distinct {
                // Never the same location: the values need not agree.
                continue;
            }
        }
        let both = Term::and([same, amount.is_positive(), other_amount.is_positive()]);
        decider.assume(Term::implies(
            both,
            Term::eq(snap.clone(), value_for(&other, &args)),
        ))?;
    }
    if let (true, [receiver]) = (full, args.as_slice()) {
        label_owner(decider, heap, resource, receiver)?;
    }
    heap.push(Chunk::at(resource.clone(), args, snap, amount));
    Ok(())
}

/// Labels `receiver`, about to be held in full, apart from every receiver of `resource`
/// held in full now (see [`Owners`]): with the current labels when all the receivers they
/// label are still held in full, else with a fresh labelling of those held now.
fn label_owner(
    decider: &mut Decider,
    heap: &mut Heap,
    resource: &Resource,
    receiver: &Term,
) -> Result<(), SolverError> {
    let max = resource.max_amount();
    // In heap order, so a fresh labelling does not depend on hashing.
    let held: Vec<Term> = heap
        .of(resource)
        .filter(|&i| !heap.chunks[i].is_quantified())
        .filter(|&i| Some(&heap.chunks[i].perm) == max.as_ref())
        .filter_map(|i| heap.chunks[i].args.first().cloned())
        .collect();
    let index = match heap.owners.iter().position(|o| o.resource == *resource) {
        Some(i) => i,
        None => {
            heap.owners.push(fresh_owners(decider, resource, receiver)?);
            heap.owners.len() - 1
        }
    };
    let lookup: HashSet<&Term> = held.iter().collect();
    if !heap.owners[index]
        .labelled
        .iter()
        .all(|r| lookup.contains(r))
    {
        heap.owners[index] = fresh_owners(decider, resource, receiver)?;
    }
    let owners = &mut heap.owners[index];
    if owners.labelled.is_empty() {
        for r in held {
            assume_label(decider, owners, r)?;
        }
    }
    assume_label(decider, owners, receiver.clone())
}

fn fresh_owners(
    decider: &mut Decider,
    resource: &Resource,
    receiver: &Term,
) -> Result<Owners, SolverError> {
    let name = decider.fresh_symbol(&format!("owner.{}", resource.name()));
    let function = FunDecl::new(name, vec![receiver.sort().clone()], Sort::Int);
    decider.declare(&function)?;
    Ok(Owners {
        resource: resource.clone(),
        function,
        labelled: Vec::new(),
    })
}

fn assume_label(
    decider: &mut Decider,
    owners: &mut Owners,
    receiver: Term,
) -> Result<(), SolverError> {
    let label = Term::int(owners.labelled.len() as i64);
    decider.assume(Term::eq(
        Term::app(&owners.function, vec![receiver.clone()]),
        label,
    ))?;
    owners.labelled.push(receiver);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::{FunDecl, Symbol};

    fn r(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::named("Ref")))
    }

    /// A quantified chunk of `f` holding all of `loc(array, i)`, as made for `array`.
    fn array_chunk(array: &str) -> Chunk {
        let v = Symbol::user("r");
        let var = Term::var(v.clone(), Sort::named("Ref"));
        let owner = FunDecl::new(
            Symbol::user("owner"),
            vec![Sort::named("Ref")],
            Sort::named("Ref"),
        );
        let mine = Term::eq(Term::app(&owner, vec![var]), r(array));
        let perm = Permission(Term::ite(mine, Permission::write().0, Permission::none().0));
        Chunk::quantified(
            Resource::Field("f".into()),
            vec![(v, Sort::named("Ref"))],
            Term::int(0),
            perm,
        )
    }

    #[test]
    fn the_likely_source_is_the_chunk_made_for_the_same_constants() {
        let mut heap = Heap::new();
        heap.push(array_chunk("a"));
        heap.push(array_chunk("b"));
        heap.push(Chunk::field("f", r("b"), Term::int(1), Permission::write()));
        let f = Resource::Field("f".into());
        let needed = Term::ite(
            Term::eq(r("q"), r("b")),
            Permission::write().0,
            Permission::none().0,
        );
        assert_eq!(likely_sources(&heap, &f, &needed), vec![1]);
        assert!(likely_sources(&heap, &f, &r("c")).is_empty());
    }

    #[test]
    fn perm_sums_the_chunks_that_may_be_the_location() {
        let mut heap = Heap::new();
        let f = Resource::Field("f".into());
        heap.push(Chunk::field(
            "f",
            r("x"),
            Term::int(1),
            Permission::fraction(1, 2),
        ));
        heap.push(Chunk::field(
            "f",
            r("y"),
            Term::int(2),
            Permission::fraction(1, 2),
        ));
        heap.push(Chunk::predicate(
            "f2",
            vec![r("x")],
            Term::int(3),
            Permission::write(),
        ));
        let total = perm_of(&heap, &f, &[r("x")]);
        let text = total.0.to_string();
        assert!(text.contains("ite"), "{text}");
        // Taking x.f's half empties x's chunk; y's keeps its half where x != y.
        take_greedily(&mut heap, &f, &[r("x")], &Permission::fraction(1, 2));
        assert_eq!(heap.chunks.len(), 2);
        assert_eq!(heap.chunks[0].args, [r("y")]);
        assert!(heap.chunks[0].perm.0.to_string().contains("ite"));
        assert_eq!(heap.chunks[1].perm, Permission::write());
    }

    fn instance(name: &str, arg: Term) -> Chunk {
        Chunk::predicate(name, vec![arg], Term::int(0), Permission::write())
    }

    #[test]
    fn taking_all_of_the_same_instance_empties_its_chunk() {
        let mut heap = Heap::new();
        heap.push(instance("P", r("x")));
        take_greedily(
            &mut heap,
            &Resource::Predicate("P".into()),
            &[r("x")],
            &Permission::write(),
        );
        assert!(heap.chunks.is_empty());
    }

    #[test]
    fn an_instance_that_may_differ_keeps_a_conditional_amount() {
        let mut heap = Heap::new();
        heap.push(instance("P", r("x")));
        take_greedily(
            &mut heap,
            &Resource::Predicate("P".into()),
            &[r("y")],
            &Permission::write(),
        );
        assert_eq!(heap.chunks.len(), 1);
        assert_ne!(heap.chunks[0].perm, Permission::write());
    }

    #[test]
    fn other_resources_are_left_alone() {
        let mut heap = Heap::new();
        heap.push(instance("Q", r("x")));
        heap.push(Chunk::field("P", r("x"), Term::int(1), Permission::write()));
        take_greedily(
            &mut heap,
            &Resource::Predicate("P".into()),
            &[r("x")],
            &Permission::write(),
        );
        assert!(heap.chunks.iter().all(|c| c.perm == Permission::write()));
    }

    #[test]
    fn writes_reach_every_chunk_that_may_be_the_location() {
        let mut heap = Heap::new();
        let f = Resource::Field("f".into());
        heap.push(Chunk::field("f", r("x"), Term::int(1), Permission::write()));
        write(&mut heap, &f, &[r("x")], &Term::int(5));
        assert_eq!(heap.chunks[0].snap, Term::int(5));
        write(&mut heap, &f, &[r("y")], &Term::int(6));
        assert!(heap.chunks[0].snap.to_string().contains("ite"));
        assert_eq!(
            value_of(&heap, &f, &[r("x")], Term::int(0)).sort(),
            &Sort::Int
        );
    }
}
