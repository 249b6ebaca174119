//! Names and sorts: how a ground Viper type is spelt in SMT, and the small helpers every
//! axiomatisation uses to build bound variables and quantifiers.
//!
//! Naming scheme (all through [`Symbol::user`]): a sort is named after the Viper type it
//! stands for, without spaces (`Seq[Int]`, `Map[Int,Seq[Ref]]`, `Pair[Int,Bool]`, a
//! non-generic domain `D`); a function of a type is `TYPE.op` (`Seq[Int].append`,
//! `D[Int].f`, `List[Int].Cons`, `List[Int].Cons.head`). Viper identifiers contain no `.`,
//! `[` or `,`, so these names cannot clash with names made from Viper identifiers.

use germanium_semantics::types::Type;
use germanium_smt::{FunDecl, Quantifier, QuantifierKind, Sort, Symbol, Term};

/// The SMT-facing name of a ground type (see the module documentation).
pub fn type_name(ty: &Type) -> String {
    fn list(args: &[Type]) -> String {
        args.iter().map(type_name).collect::<Vec<_>>().join(",")
    }
    match ty {
        Type::Int => "Int".into(),
        Type::Bool => "Bool".into(),
        Type::Perm => "Perm".into(),
        Type::Ref => "Ref".into(),
        Type::Seq(t) => format!("Seq[{}]", type_name(t)),
        Type::Set(t) => format!("Set[{}]", type_name(t)),
        Type::Multiset(t) => format!("Multiset[{}]", type_name(t)),
        Type::Map(k, v) => format!("Map[{},{}]", type_name(k), type_name(v)),
        Type::Domain(n, a) | Type::Adt(n, a) if a.is_empty() => n.clone(),
        Type::Domain(n, a) | Type::Adt(n, a) => format!("{n}[{}]", list(a)),
        other => format!("<{other}>"),
    }
}

/// `TYPE.op`, the symbol of a function belonging to the theory of `owner`.
pub(crate) fn member_symbol(owner: &str, member: &str) -> Symbol {
    Symbol::user(&format!("{owner}.{member}"))
}

/// A function of the theory of `owner`.
pub(crate) fn member_fun(owner: &str, member: &str, args: Vec<Sort>, result: Sort) -> FunDecl {
    FunDecl::new(member_symbol(owner, member), args, result)
}

/// Nesting depth of a type, to bound monomorphisation of generic domains.
pub(crate) fn depth(ty: &Type) -> usize {
    match ty {
        Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => 1 + depth(t),
        Type::Map(k, v) => 1 + depth(k).max(depth(v)),
        Type::Domain(_, a) | Type::Adt(_, a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A bound variable for an axiom.
pub(crate) fn bound(name: &str, sort: &Sort) -> Term {
    Term::var(Symbol::user(name), sort.clone())
}

/// `forall vars :: {triggers} body`, named `qid` in Z3's statistics. `vars` must be
/// variables made by [`bound`].
/// `xy && yz ==> xz` for all `vars` (x, y, z), triggered by the two premises together: the
/// transitivity of a relation.
pub(crate) fn transitivity(qid: &str, vars: [&Term; 3], xy: Term, yz: Term, xz: Term) -> Term {
    forall(
        qid,
        &vars,
        vec![vec![xy.clone(), yz.clone()]],
        Term::implies(Term::and([xy, yz]), xz),
    )
}

pub(crate) fn forall(qid: &str, vars: &[&Term], triggers: Vec<Vec<Term>>, body: Term) -> Term {
    quantifier(QuantifierKind::Forall, qid, vars, triggers, body)
}

/// `exists vars :: {triggers} body`.
pub(crate) fn exists(qid: &str, vars: &[&Term], triggers: Vec<Vec<Term>>, body: Term) -> Term {
    quantifier(QuantifierKind::Exists, qid, vars, triggers, body)
}

fn quantifier(
    kind: QuantifierKind,
    qid: &str,
    vars: &[&Term],
    triggers: Vec<Vec<Term>>,
    body: Term,
) -> Term {
    let vars = vars
        .iter()
        .filter_map(|v| match v.kind() {
            germanium_smt::TermKind::Var(name) => Some((name.clone(), v.sort().clone())),
            // Only `bound` variables are passed here.
            _ => None,
        })
        .collect();
    Term::quantifier(Quantifier {
        kind,
        vars,
        body,
        triggers,
        qid: Some(Symbol::user(qid)),
        weight: None,
    })
}

/// `lo <= x && x < hi`.
pub(crate) fn in_range(lo: Term, x: &Term, hi: Term) -> Term {
    Term::and([Term::le(lo, x.clone()), Term::lt(x.clone(), hi)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_viper_spellings_without_spaces() {
        let t = Type::map(
            Type::Int,
            Type::seq(Type::Domain("D".into(), vec![Type::Bool, Type::Ref])),
        );
        assert_eq!(type_name(&t), "Map[Int,Seq[D[Bool,Ref]]]");
        assert_eq!(type_name(&Type::Adt("List".into(), vec![])), "List");
        assert_eq!(
            member_symbol("Seq[Int]", "append").to_string(),
            "|Seq[Int].append|"
        );
        assert_eq!(depth(&t), 3);
    }
}
