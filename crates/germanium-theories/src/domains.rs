//! User domains, monomorphised: per ground instance, a declared sort (or the backend sort
//! of an interpreted domain), one declared function per domain function (or the SMT
//! built-in its `interpretation` names), distinctness of `unique` constants, and each axiom
//! translated with the instance's type arguments substituted.

use std::collections::HashMap;

use germanium_semantics::types::Type;
use germanium_semantics::{DomainInfo, Semantics};
use germanium_smt::{FunDecl, Sort, Term};
use germanium_syntax::ast::Domain;

use super::instances::{apply_subst, substitution};
use super::pure_translate::PureTranslator;
use super::sorts::{member_fun, type_name};
use super::{Theories, Unsupported};

/// How one domain function of one instance is expressed.
#[derive(Clone, Debug)]
pub(crate) enum DomainFn {
    Declared(FunDecl),
    /// `interpretation "name"`: the text is the head of the SMT application (e.g.
    /// `fp.add RNE`, `(_ int2bv 32)`, or a constant such as `#b0` without arguments).
    Builtin {
        head: String,
        params: usize,
        result: Sort,
    },
}

impl DomainFn {
    pub fn apply(&self, args: Vec<Term>) -> Result<Term, Unsupported> {
        match self {
            DomainFn::Declared(decl) => {
                if decl.args().len() != args.len() {
                    return Err(Unsupported(format!(
                        "{} applied to {} arguments",
                        decl.name(),
                        args.len()
                    )));
                }
                Ok(Term::app(decl, args))
            }
            DomainFn::Builtin {
                head,
                params,
                result,
            } => {
                if *params != args.len() {
                    return Err(Unsupported(format!(
                        "{head} applied to {} arguments",
                        args.len()
                    )));
                }
                Ok(Term::builtin(head, args, result.clone()))
            }
        }
    }
}

/// The sort of a domain instance: the SMT-LIB backend type for interpreted domains, a
/// declared sort otherwise; `None` when interpreted for other back ends only.
pub(crate) fn domain_sort(info: &DomainInfo, ty: &Type) -> Option<Sort> {
    match &info.interpretation {
        None => Some(Sort::named(&type_name(ty))),
        Some(backends) => backends
            .iter()
            .find(|(k, _)| k == "SMTLIB")
            .map(|(_, text)| Sort::raw(text)),
    }
}

/// The functions of one domain instance, keyed by function name; functions whose signature
/// has no sort are left out (with a note in `problems`).
pub(crate) fn functions(
    ty: &Type,
    sem: &Semantics,
    sort_of: &dyn Fn(&Type) -> Option<Sort>,
    problems: &mut Vec<String>,
) -> Vec<(String, DomainFn, bool)> {
    let Type::Domain(name, args) = ty else {
        return Vec::new();
    };
    let Some(info) = sem.domains.get(name) else {
        return Vec::new();
    };
    let subst = substitution(&info.type_params, args);
    let owner = type_name(ty);
    let mut out = Vec::new();
    for fname in &info.functions {
        let Some(f) = sem.domain_functions.get(fname) else {
            continue;
        };
        let params: Option<Vec<Sort>> = f
            .params
            .iter()
            .map(|p| sort_of(&apply_subst(p, &subst)))
            .collect();
        let result = sort_of(&apply_subst(&f.result, &subst));
        let (Some(params), Some(result)) = (params, result) else {
            problems.push(format!(
                "{owner}.{fname}: a type in its signature has no sort"
            ));
            continue;
        };
        let function = match &f.interpretation {
            Some(head) => DomainFn::Builtin {
                head: head.clone(),
                params: params.len(),
                result,
            },
            None => DomainFn::Declared(member_fun(&owner, fname, params, result)),
        };
        out.push((fname.clone(), function, f.unique && f.params.is_empty()));
    }
    out
}

/// `distinct` over the `unique` constants of each result sort (across all instances, as
/// in Viper where uniqueness is per type).
pub(crate) fn uniqueness(constants: &[FunDecl]) -> Vec<Term> {
    let mut by_sort: Vec<(Sort, Vec<Term>)> = Vec::new();
    for c in constants {
        match by_sort.iter_mut().find(|(s, _)| s == c.result()) {
            Some((_, terms)) => terms.push(Term::constant(c)),
            None => by_sort.push((c.result().clone(), vec![Term::constant(c)])),
        }
    }
    by_sort
        .into_iter()
        .filter(|(_, terms)| terms.len() > 1)
        .map(|(_, terms)| Term::distinct(terms))
        .collect()
}

/// The axioms of one domain instance; those that cannot be translated are skipped (which
/// only weakens what the verifier assumes) and noted in `problems`.
pub(crate) fn axioms(
    theories: &Theories,
    ty: &Type,
    syntax: &Domain,
    sem: &Semantics,
    calls: super::FunctionCalls<'_>,
    problems: &mut Vec<String>,
) -> Vec<Term> {
    let Type::Domain(name, args) = ty else {
        return Vec::new();
    };
    let Some(info) = sem.domains.get(name) else {
        return Vec::new();
    };
    let subst = substitution(&info.type_params, args);
    let mut out = Vec::new();
    for (i, axiom) in syntax.axioms.iter().enumerate() {
        let mut translator = PureTranslator::new(theories, sem, &subst, calls);
        match translator.expr(&axiom.body) {
            Ok(term) => out.push(term),
            Err(Unsupported(why)) => {
                let label = axiom
                    .name
                    .as_ref()
                    .map_or_else(|| format!("#{i}"), |n| n.name.clone());
                problems.push(format!(
                    "axiom {label} of {}: skipped ({why})",
                    type_name(ty)
                ));
            }
        }
    }
    out
}

/// Lookup key of a domain function instance.
pub(crate) type FnKey = (String, Vec<Type>);

pub(crate) type FnTable = HashMap<FnKey, DomainFn>;
