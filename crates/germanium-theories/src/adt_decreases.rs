//! Well-founded orders of ADTs (as Viper's ADT plugin generates them): when the program has
//! the generic `WellFoundedOrder` domain and no domain `<Adt>WellFoundedOrder` of its own,
//! every value of the ADT is `bounded`, each constructor argument of the ADT's own type is
//! `decreasing` with respect to the constructed value, and `decreasing` is transitive. All
//! three hold for the strict subterm order, which is well-founded on finite data, so the
//! axioms are sound; they only build terms over existing ones, so matching terminates.

use std::collections::HashMap;

use germanium_semantics::types::Type;
use germanium_semantics::Semantics;
use germanium_smt::{FunDecl, Term};

use super::adts::AdtInstance;
use super::domains::{DomainFn, FnTable};
use super::sorts::{bound, forall, type_name};

const ORDER: &str = "WellFoundedOrder";

/// The declared `name` function of `WellFoundedOrder[ty]`, if it is the library's.
fn order_function(sem: &Semantics, functions: &FnTable, name: &str, ty: &Type) -> Option<FunDecl> {
    if sem.domain_functions.get(name).map(|f| f.domain.as_str()) != Some(ORDER) {
        return None;
    }
    match functions.get(&(name.to_string(), vec![ty.clone()])) {
        Some(DomainFn::Declared(decl)) => Some(decl.clone()),
        _ => None,
    }
}

/// The constructor and transitivity axioms for each ADT instance in `adts` whose
/// `decreasing` and `bounded` are in use.
pub(crate) fn axioms(
    sem: &Semantics,
    adts: &HashMap<Type, AdtInstance>,
    functions: &FnTable,
) -> Vec<Term> {
    let mut out = Vec::new();
    let mut types: Vec<&Type> = adts.keys().collect();
    types.sort_by_key(|t| type_name(t));
    for ty in types {
        let Type::Adt(name, args) = ty else { continue };
        if sem.domains.contains_key(&format!("{name}{ORDER}")) {
            continue; // the program defines this order itself
        }
        let (Some(decreasing), Some(bounded)) = (
            order_function(sem, functions, "decreasing", ty),
            order_function(sem, functions, "bounded", ty),
        ) else {
            continue;
        };
        let Some(info) = sem.adts.get(name) else {
            continue;
        };
        let _ = args;
        let bounded_var = bound("x", &decreasing.args()[0]);
        let all_bounded = Term::app(&bounded, vec![bounded_var.clone()]);
        out.push(forall(
            &format!("{}.bounded", type_name(ty)),
            &[&bounded_var],
            vec![vec![all_bounded.clone()]],
            all_bounded,
        ));
        let mut fresh = 0;
        for cname in &info.constructors {
            let mut visited = vec![ty.clone()];
            let Some(built) = constructor_values(
                sem,
                adts,
                ty,
                name_args(ty),
                cname,
                ty,
                &mut visited,
                &mut fresh,
            ) else {
                continue;
            };
            for (vars, value, smaller) in built {
                let refs: Vec<&Term> = vars.iter().collect();
                let qid = format!("{}.{cname}.decreasing", type_name(ty));
                let fact = Term::app(&decreasing, vec![smaller, value.clone()]);
                out.push(forall(&qid, &refs, vec![vec![value]], fact));
            }
        }
        let sort = &decreasing.args()[0];
        let (x, y, z) = (bound("v1", sort), bound("v2", sort), bound("v3", sort));
        let xy = Term::app(&decreasing, vec![x.clone(), y.clone()]);
        let yz = Term::app(&decreasing, vec![y.clone(), z.clone()]);
        let xz = Term::app(&decreasing, vec![x.clone(), z.clone()]);
        let qid = format!("{}.decreasing.transitive", type_name(ty));
        out.push(super::sorts::transitivity(&qid, [&x, &y, &z], xy, yz, xz));
    }
    out
}

fn name_args(ty: &Type) -> &[Type] {
    match ty {
        Type::Adt(_, args) => args,
        _ => &[],
    }
}

/// The values `C(args)` of constructor `cname` of the ADT instance `owner` that contain a
/// value of type `target` as an argument, directly or inside constructors of other ADTs
/// not yet `visited` (Viper's treatment of mutually recursive ADTs): each as the bound
/// variables, the constructed value and the contained value.
#[allow(clippy::too_many_arguments)]
fn constructor_values(
    sem: &Semantics,
    adts: &HashMap<Type, AdtInstance>,
    owner: &Type,
    owner_args: &[Type],
    cname: &str,
    target: &Type,
    visited: &mut Vec<Type>,
    fresh: &mut usize,
) -> Option<Vec<(Vec<Term>, Term, Term)>> {
    let Type::Adt(name, _) = owner else {
        return None;
    };
    let info = sem.adts.get(name)?;
    let inst = adts.get(owner)?;
    let c = sem.constructors.get(cname)?;
    let ctor = inst.constructor(cname).ok()?;
    let subst = super::instances::substitution(&info.type_params, owner_args);
    let vars: Vec<Term> = ctor
        .selectors
        .iter()
        .map(|(_, sel)| {
            *fresh += 1;
            bound(&format!("a{fresh}"), sel.result())
        })
        .collect();
    let mut out = Vec::new();
    for (i, (_, field_ty)) in c.fields.iter().enumerate() {
        let field_ty = super::instances::apply_subst(field_ty, &subst);
        // The argument itself, or values of its (other) ADT type that contain the target.
        let nested: Vec<(Vec<Term>, Term, Term)> = if field_ty == *target {
            vec![(vec![vars[i].clone()], vars[i].clone(), vars[i].clone())]
        } else if let (Type::Adt(inner, inner_args), false) =
            (&field_ty, visited.contains(&field_ty))
        {
            visited.push(field_ty.clone());
            let mut found = Vec::new();
            for inner_c in sem
                .adts
                .get(inner)
                .map(|a| a.constructors.clone())
                .unwrap_or_default()
            {
                if let Some(values) = constructor_values(
                    sem, adts, &field_ty, inner_args, &inner_c, target, visited, fresh,
                ) {
                    found.extend(values);
                }
            }
            visited.pop();
            found
        } else {
            Vec::new()
        };
        for (inner_vars, value, smaller) in nested {
            let mut args = vars.clone();
            args[i] = value;
            let Ok(built) = inst.construct(cname, args) else {
                continue;
            };
            let bound_vars: Vec<Term> = vars
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, v)| v.clone())
                .chain(inner_vars)
                .collect();
            out.push((bound_vars, built, smaller));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use germanium_semantics::types::Type;

    use super::super::tests::{int, Check};
    use super::super::TheoryOp;

    const ADTS: &str = "
domain WellFoundedOrder[T] {
  function decreasing(a: T, b: T): Bool
  function bounded(a: T): Bool
}
adt Odd { OddOne(e: Even) }
adt Even { Zero() EvenOne(n: Int, o: Odd) }
function depth(e: Even): Int decreases e { 0 }
";

    #[test]
    fn arguments_and_values_nested_through_other_adts_decrease() {
        let mut c = Check::new(ADTS);
        let even = Type::Adt("Even".into(), vec![]);
        let ctor = |adt: &str, name: &str| TheoryOp::AdtConstructor {
            adt: adt.into(),
            constructor: name.into(),
            type_args: vec![],
        };
        let order = |f: &str| TheoryOp::DomainFunction {
            domain: "WellFoundedOrder".into(),
            function: f.into(),
            type_args: vec![even.clone()],
        };
        let zero = c.op(ctor("Even", "Zero"), vec![]);
        let one = c.op(ctor("Odd", "OddOne"), vec![zero.clone()]);
        let two = c.op(ctor("Even", "EvenOne"), vec![int(7), one.clone()]);
        let three = c.op(ctor("Odd", "OddOne"), vec![two.clone()]);
        let four = c.op(ctor("Even", "EvenOne"), vec![int(8), three]);
        // `Zero()` sits inside `EvenOne(7, OddOne(Zero()))` through the other ADT.
        assert!(c.valid(
            &[],
            c.op(order("decreasing"), vec![zero.clone(), two.clone()])
        ));
        // Transitively two levels down.
        assert!(c.valid(
            &[],
            c.op(order("decreasing"), vec![zero.clone(), four.clone()])
        ));
        assert!(c.valid(&[], c.op(order("bounded"), vec![four.clone()])));
        assert!(!c.valid(
            &[],
            c.op(order("decreasing"), vec![two.clone(), zero.clone()])
        ));
        assert!(!c.valid(&[], c.op(order("decreasing"), vec![two.clone(), two])));
    }
}
