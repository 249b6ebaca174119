//! The `contains` relation of ADTs with `derives { contains }`: `contains(a, b)` holds when
//! `a` is a constructor argument of `b`, transitively.
//!
//! As in Viper, `contains` is the standard library's generic domain function, and the ADT
//! adds two kinds of axioms: for each constructor `C` with fields `x1..xn` (less those
//! after `without`), `forall x1..xn {C(x1..xn)} :: contains(xi, C(x1..xn))` for each i; and
//! transitivity `contains(a, b) && contains(b, c) ==> contains(a, c)` for each triple of
//! types where the two premises' instances are in use. Both hold for the subterm relation,
//! so they are sound; they only create `contains` terms over existing terms, so matching
//! terminates.

use std::collections::{HashMap, HashSet};

use germanium_semantics::types::Type;
use germanium_semantics::Semantics;
use germanium_smt::Term;

use super::adts::AdtInstance;
use super::domains::{DomainFn, FnTable};
use super::sorts::{bound, forall};

/// The function name the `derives` clause refers to.
const CONTAINS: &str = "contains";

/// The domain declaring `contains` (the standard library's), if the program has it with
/// the expected shape (two type parameters, one per argument).
pub(crate) fn contains_domain(sem: &Semantics) -> Option<String> {
    let f = sem.domain_functions.get(CONTAINS)?;
    let info = sem.domains.get(&f.domain)?;
    let params: Vec<Type> = info
        .type_params
        .iter()
        .map(|p| Type::Var(p.clone()))
        .collect();
    (params.len() == 2 && f.params == params && f.result == Type::Bool).then(|| f.domain.clone())
}

/// Whether the ADT `name` derives `contains`, and which destructors it leaves out.
fn derived_contains<'a>(sem: &'a Semantics, name: &str) -> Option<&'a [String]> {
    let info = sem.adts.get(name)?;
    info.derives
        .iter()
        .find(|(d, _, _)| d == CONTAINS)
        .map(|(_, _, without)| without.as_slice())
}

/// The `(argument type, ADT type)` pairs of `contains` that the constructor axioms of the
/// ground ADT instance `adt` use (empty when it does not derive `contains`).
pub(crate) fn constructor_pairs(sem: &Semantics, adt: &Type) -> Vec<(Type, Type)> {
    let Type::Adt(name, args) = adt else {
        return Vec::new();
    };
    let (Some(without), Some(info)) = (derived_contains(sem, name), sem.adts.get(name)) else {
        return Vec::new();
    };
    let subst = super::instances::substitution(&info.type_params, args);
    let mut out = Vec::new();
    for c in info
        .constructors
        .iter()
        .filter_map(|c| sem.constructors.get(c))
    {
        for (field, ty) in &c.fields {
            if !without.contains(field) {
                out.push((super::instances::apply_subst(ty, &subst), adt.clone()));
            }
        }
    }
    out
}

/// Pairs `(a, c)` that transitivity needs besides `pairs` (closure of the relation), in a
/// deterministic order.
pub(crate) fn transitive_pairs(pairs: &[(Type, Type)]) -> Vec<(Type, Type)> {
    let given: HashSet<&(Type, Type)> = pairs.iter().collect();
    let mut closure: Vec<(Type, Type)> = pairs.to_vec();
    let mut seen: HashSet<(Type, Type)> = pairs.iter().cloned().collect();
    let mut i = 0;
    while i < closure.len() {
        let (a, b) = closure[i].clone();
        let next: Vec<Type> = closure
            .iter()
            .filter(|(b2, _)| *b2 == b)
            .map(|(_, c)| c.clone())
            .collect();
        for c in next {
            if seen.insert((a.clone(), c.clone())) {
                closure.push((a.clone(), c));
            }
        }
        // Pairs ending where this one starts compose with it too.
        let prev: Vec<Type> = closure
            .iter()
            .filter(|(_, a2)| *a2 == a)
            .map(|(z, _)| z.clone())
            .collect();
        for z in prev {
            if seen.insert((z.clone(), b.clone())) {
                closure.push((z, b.clone()));
            }
        }
        i += 1;
    }
    closure.into_iter().filter(|p| !given.contains(p)).collect()
}

/// The constructor and transitivity axioms (see the module documentation) for the ADT
/// instances `adts` and the declared `contains` instances in `functions`.
pub(crate) fn axioms(
    sem: &Semantics,
    adts: &HashMap<Type, AdtInstance>,
    functions: &FnTable,
) -> Vec<Term> {
    let instance = |a: &Type, b: &Type| match functions
        .get(&(CONTAINS.to_string(), vec![a.clone(), b.clone()]))
    {
        Some(DomainFn::Declared(decl)) => Some(decl.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    let mut types: Vec<&Type> = adts.keys().collect();
    types.sort_by_key(|t| super::sorts::type_name(t));
    for ty in types {
        let Type::Adt(name, args) = ty else { continue };
        let Some(without) = derived_contains(sem, name) else {
            continue;
        };
        let Some(info) = sem.adts.get(name) else {
            continue;
        };
        let subst = super::instances::substitution(&info.type_params, args);
        let Some(inst) = adts.get(ty) else { continue };
        for cname in &info.constructors {
            let (Some(c), Some(ctor)) = (sem.constructors.get(cname), inst.constructor(cname).ok())
            else {
                continue;
            };
            let vars: Vec<Term> = ctor
                .selectors
                .iter()
                .enumerate()
                .map(|(i, (_, sel))| bound(&format!("x{i}"), sel.result()))
                .collect();
            if vars.is_empty() {
                continue;
            }
            let Ok(built) = inst.construct(cname, vars.clone()) else {
                continue;
            };
            let mut facts = Vec::new();
            for (i, (field, field_ty)) in c.fields.iter().enumerate() {
                if without.contains(field) {
                    continue;
                }
                let field_ty = super::instances::apply_subst(field_ty, &subst);
                if let Some(decl) = instance(&field_ty, ty) {
                    facts.push(Term::app(&decl, vec![vars[i].clone(), built.clone()]));
                }
            }
            if !facts.is_empty() {
                let refs: Vec<&Term> = vars.iter().collect();
                let qid = format!("{}.{cname}.contains", super::sorts::type_name(ty));
                out.push(forall(
                    &qid,
                    &refs,
                    vec![vec![built.clone()]],
                    Term::and(facts),
                ));
            }
        }
    }
    out.extend(transitivity(functions));
    out
}

/// `contains(a, b) && contains(b, c) ==> contains(a, c)` for every triple of declared
/// instances.
fn transitivity(functions: &FnTable) -> Vec<Term> {
    let mut pairs: Vec<(&Type, &Type, &DomainFn)> = functions
        .iter()
        .filter_map(|((name, args), f)| match (name.as_str(), args.as_slice()) {
            (CONTAINS, [a, b]) => Some((a, b, f)),
            _ => None,
        })
        .collect();
    pairs.sort_by_key(|(a, b, _)| (super::sorts::type_name(a), super::sorts::type_name(b)));
    let mut out = Vec::new();
    for (a, b, ab) in &pairs {
        for (b2, c, bc) in &pairs {
            if b2 != b {
                continue;
            }
            let Some((_, _, ac)) = pairs.iter().find(|(x, y, _)| x == a && y == c) else {
                continue;
            };
            let (DomainFn::Declared(ab), DomainFn::Declared(bc), DomainFn::Declared(ac)) =
                (ab, bc, ac)
            else {
                continue;
            };
            let x = bound("a", &ab.args()[0]);
            let y = bound("b", &ab.args()[1]);
            let z = bound("c", &bc.args()[1]);
            let xy = Term::app(ab, vec![x.clone(), y.clone()]);
            let yz = Term::app(bc, vec![y.clone(), z.clone()]);
            let xz = Term::app(ac, vec![x.clone(), z.clone()]);
            let qid = format!(
                "contains.transitive[{},{},{}]",
                super::sorts::type_name(a),
                super::sorts::type_name(b),
                super::sorts::type_name(c)
            );
            out.push(super::sorts::transitivity(&qid, [&x, &y, &z], xy, yz, xz));
        }
    }
    out
}
