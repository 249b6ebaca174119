//! ADT instances as SMT-LIB datatypes (`declare-datatypes`): Z3's datatype theory gives
//! constructor injectivity, distinctness, exhaustiveness and acyclicity without quantifiers,
//! so ADTs add nothing to E-matching. All instances go into one command, so mutually
//! recursive ADTs are fine; collection and domain sorts are declared before it.
//!
//! Z3 rejects datatypes without a finite value (every constructor recursive); such an
//! instance, and every instance that needs it, is left out and reported unsupported.

use std::collections::{HashMap, HashSet};

use germanium_semantics::types::Type;
use germanium_semantics::Semantics;
use germanium_smt::{FunDecl, Sort, Term};

use super::instances::{apply_subst, substitution};
use super::sorts::{member_fun, member_symbol, type_name};
use super::Unsupported;

/// One constructor of an ADT instance.
#[derive(Debug)]
pub(crate) struct Constructor {
    pub decl: FunDecl,
    /// Destructor name and selector function, in field order.
    pub selectors: Vec<(String, FunDecl)>,
    /// Field types (ground).
    fields: Vec<Type>,
}

/// One ground ADT instance.
#[derive(Debug)]
pub(crate) struct AdtInstance {
    pub sort: Sort,
    pub constructors: Vec<(String, Constructor)>,
}

impl AdtInstance {
    pub fn constructor(&self, name: &str) -> Result<&Constructor, Unsupported> {
        self.constructors
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .ok_or_else(|| Unsupported(format!("unknown ADT constructor {name}")))
    }

    /// `C(args)`.
    pub fn construct(&self, name: &str, args: Vec<Term>) -> Result<Term, Unsupported> {
        let c = self.constructor(name)?;
        if args.len() != c.selectors.len() {
            return Err(Unsupported(format!(
                "constructor {name} applied to {} arguments",
                args.len()
            )));
        }
        Ok(Term::app(&c.decl, args))
    }

    /// `t.field` for a field of constructor `ctor`.
    pub fn destruct(&self, ctor: &str, field: &str, t: Term) -> Result<Term, Unsupported> {
        let c = self.constructor(ctor)?;
        match c.selectors.iter().find(|(n, _)| n == field) {
            Some((_, sel)) => Ok(Term::app(sel, vec![t])),
            None => Err(Unsupported(format!("unknown destructor {field} of {ctor}"))),
        }
    }

    /// `t.isC`, Z3's tester `((_ is C) t)`.
    pub fn discriminate(&self, ctor: &str, t: Term) -> Result<Term, Unsupported> {
        let c = self.constructor(ctor)?;
        Ok(Term::builtin(
            &format!("(_ is {})", c.decl.name()),
            vec![t],
            Sort::Bool,
        ))
    }
}

/// Builds every ADT instance among `types`. `sort_of` gives the sort of any other ground
/// type (or fails); ADT sorts are named by [`type_name`]. Returns the instances that can be
/// declared, by type, and the problems with the others.
pub(crate) fn build(
    types: &[Type],
    sem: &Semantics,
    sort_of: &dyn Fn(&Type) -> Option<Sort>,
) -> (HashMap<Type, AdtInstance>, Vec<String>) {
    let mut problems = Vec::new();
    let mut built: HashMap<Type, AdtInstance> = HashMap::new();
    let adt_sort = |t: &Type| Sort::named(&type_name(t));
    for ty in types {
        let Type::Adt(name, args) = ty else { continue };
        let Some(info) = sem.adts.get(name) else {
            continue;
        };
        let subst = substitution(&info.type_params, args);
        let owner = type_name(ty);
        let mut constructors = Vec::new();
        let mut ok = true;
        for cname in &info.constructors {
            let Some(c) = sem.constructors.get(cname) else {
                continue;
            };
            let mut fields = Vec::new();
            let mut selectors = Vec::new();
            for (fname, fty) in &c.fields {
                let fty = apply_subst(fty, &subst);
                let sort = match &fty {
                    Type::Adt(..) => Some(adt_sort(&fty)),
                    other => sort_of(other),
                };
                let Some(sort) = sort else {
                    problems.push(format!("{owner}: no sort for field {fname}: {fty}"));
                    ok = false;
                    break;
                };
                selectors.push((
                    fname.clone(),
                    member_fun(
                        &owner,
                        &format!("{cname}.{fname}"),
                        vec![adt_sort(ty)],
                        sort,
                    ),
                ));
                fields.push(fty);
            }
            let arg_sorts = selectors.iter().map(|(_, s)| s.result().clone()).collect();
            let decl = FunDecl::new(member_symbol(&owner, cname), arg_sorts, adt_sort(ty));
            constructors.push((
                cname.clone(),
                Constructor {
                    decl,
                    selectors,
                    fields,
                },
            ));
        }
        if ok {
            built.insert(
                ty.clone(),
                AdtInstance {
                    sort: adt_sort(ty),
                    constructors,
                },
            );
        }
    }
    // Keep only instances with a finite value whose ADT fields are all kept: the least
    // fixpoint of "some constructor has only finite-valued or non-ADT fields".
    let mut finite: HashSet<Type> = HashSet::new();
    loop {
        let before = finite.len();
        for (ty, inst) in &built {
            let has_base = inst.constructors.iter().any(|(_, c)| {
                c.fields
                    .iter()
                    .all(|f| !matches!(f, Type::Adt(..)) || finite.contains(f))
            });
            if has_base {
                finite.insert(ty.clone());
            }
        }
        if finite.len() == before {
            break;
        }
    }
    // An instance also needs every ADT its fields mention to be declared.
    loop {
        let dropped: Vec<Type> = built
            .iter()
            .filter(|(ty, inst)| {
                !finite.contains(*ty)
                    || inst
                        .constructors
                        .iter()
                        .any(|(_, c)| c.fields.iter().any(|f| mentions_missing_adt(f, &built)))
            })
            .map(|(ty, _)| ty.clone())
            .collect();
        if dropped.is_empty() {
            break;
        }
        for ty in dropped {
            problems.push(format!(
                "ADT {ty} has no finite value or needs an undeclarable type"
            ));
            built.remove(&ty);
            finite.remove(&ty);
        }
    }
    (built, problems)
}

fn mentions_missing_adt(t: &Type, built: &HashMap<Type, AdtInstance>) -> bool {
    match t {
        Type::Adt(_, args) => {
            !built.contains_key(t) || args.iter().any(|a| mentions_missing_adt(a, built))
        }
        Type::Seq(e) | Type::Set(e) | Type::Multiset(e) => mentions_missing_adt(e, built),
        Type::Map(k, v) => mentions_missing_adt(k, built) || mentions_missing_adt(v, built),
        Type::Domain(_, args) => args.iter().any(|a| mentions_missing_adt(a, built)),
        _ => false,
    }
}

/// The one `declare-datatypes` command for `instances` (in the given order), as text.
pub(crate) fn declare_datatypes(instances: &[(&Type, &AdtInstance)]) -> Option<String> {
    if instances.is_empty() {
        return None;
    }
    let heads: Vec<String> = instances
        .iter()
        .map(|(_, i)| format!("({} 0)", i.sort))
        .collect();
    let bodies: Vec<String> = instances
        .iter()
        .map(|(_, inst)| {
            let ctors: Vec<String> = inst
                .constructors
                .iter()
                .map(|(_, c)| {
                    let mut text = format!("({}", c.decl.name());
                    for (_, sel) in &c.selectors {
                        text.push_str(&format!(" ({} {})", sel.name(), sel.result()));
                    }
                    text.push(')');
                    text
                })
                .collect();
            format!("({})", ctors.join(" "))
        })
        .collect();
    Some(format!(
        "(declare-datatypes ({}) ({}))",
        heads.join(" "),
        bodies.join(" ")
    ))
}
