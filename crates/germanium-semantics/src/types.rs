//! Viper types and the unifier used for inferring type arguments of generic domain
//! functions and ADT constructors.

use std::fmt;

/// The type of a Viper expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Int,
    Bool,
    Perm,
    Ref,
    Seq(Box<Type>),
    Set(Box<Type>),
    Multiset(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A user domain instance, including backend-interpreted domains (see
    /// [`crate::semantics::DomainInfo::interpretation`]).
    Domain(String, Vec<Type>),
    /// An ADT instance.
    Adt(String, Vec<Type>),
    /// A declared type parameter of the enclosing domain or ADT.
    Var(String),
    /// A magic wand `A --* B` (usable where a Bool assertion is expected).
    Wand,
    /// An impure assertion: `acc(...)`, a predicate instance `P(args)`, or a boolean
    /// combination containing one. Accepted where an assertion is expected, not where a
    /// Bool value is.
    Impure,
    /// An inference variable; never left in the final [`crate::Semantics`].
    Infer(u32),
    /// The type of an ill-typed expression; compatible with everything so one mistake
    /// yields one message.
    Error,
}

impl Type {
    pub fn seq(t: Type) -> Type {
        Type::Seq(Box::new(t))
    }
    pub fn set(t: Type) -> Type {
        Type::Set(Box::new(t))
    }
    pub fn multiset(t: Type) -> Type {
        Type::Multiset(Box::new(t))
    }
    pub fn map(k: Type, v: Type) -> Type {
        Type::Map(Box::new(k), Box::new(v))
    }

    /// Whether the type (after substitution) contains an error.
    pub fn has_error(&self) -> bool {
        match self {
            Type::Error => true,
            Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => t.has_error(),
            Type::Map(k, v) => k.has_error() || v.has_error(),
            Type::Domain(_, a) | Type::Adt(_, a) => a.iter().any(Type::has_error),
            _ => false,
        }
    }

    /// Replaces declared type variables by the types `lookup` gives (others unchanged).
    pub fn subst_vars(&self, lookup: &dyn Fn(&str) -> Option<Type>) -> Type {
        match self {
            Type::Var(n) => lookup(n).unwrap_or_else(|| self.clone()),
            Type::Seq(t) => Type::seq(t.subst_vars(lookup)),
            Type::Set(t) => Type::set(t.subst_vars(lookup)),
            Type::Multiset(t) => Type::multiset(t.subst_vars(lookup)),
            Type::Map(k, v) => Type::map(k.subst_vars(lookup), v.subst_vars(lookup)),
            Type::Domain(n, a) => {
                Type::Domain(n.clone(), a.iter().map(|t| t.subst_vars(lookup)).collect())
            }
            Type::Adt(n, a) => {
                Type::Adt(n.clone(), a.iter().map(|t| t.subst_vars(lookup)).collect())
            }
            _ => self.clone(),
        }
    }

    /// Whether a type variable (declared or inference) occurs in the type.
    pub fn is_ground(&self) -> bool {
        match self {
            Type::Var(_) | Type::Infer(_) => false,
            Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => t.is_ground(),
            Type::Map(k, v) => k.is_ground() && v.is_ground(),
            Type::Domain(_, a) | Type::Adt(_, a) => a.iter().all(Type::is_ground),
            _ => true,
        }
    }

    /// Assertion types: Bool, impure assertions and wands.
    pub fn is_assertion(&self) -> bool {
        matches!(self, Type::Bool | Type::Wand | Type::Impure | Type::Error)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn args(f: &mut fmt::Formatter<'_>, a: &[Type]) -> fmt::Result {
            if a.is_empty() {
                return Ok(());
            }
            write!(f, "[")?;
            for (i, t) in a.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{t}")?;
            }
            write!(f, "]")
        }
        match self {
            Type::Int => write!(f, "Int"),
            Type::Bool => write!(f, "Bool"),
            Type::Perm => write!(f, "Perm"),
            Type::Ref => write!(f, "Ref"),
            Type::Seq(t) => write!(f, "Seq[{t}]"),
            Type::Set(t) => write!(f, "Set[{t}]"),
            Type::Multiset(t) => write!(f, "Multiset[{t}]"),
            Type::Map(k, v) => write!(f, "Map[{k}, {v}]"),
            Type::Domain(n, a) | Type::Adt(n, a) => {
                write!(f, "{n}")?;
                args(f, a)
            }
            Type::Var(n) => write!(f, "{n}"),
            Type::Wand => write!(f, "Wand"),
            Type::Impure => write!(f, "Bool"),
            Type::Infer(i) => write!(f, "?{i}"),
            Type::Error => write!(f, "<error>"),
        }
    }
}

/// What an inference variable may stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarClass {
    Any,
    /// Int or Perm (the result of `/` on two Ints, operands of `<`, `+`, ...).
    Numeric,
}

/// Inference variables and their bindings for one top-level expression.
#[derive(Clone, Debug, Default)]
pub struct Unifier {
    bindings: Vec<Option<Type>>,
    classes: Vec<VarClass>,
}

impl Unifier {
    pub fn fresh(&mut self, class: VarClass) -> Type {
        self.bindings.push(None);
        self.classes.push(class);
        Type::Infer(self.bindings.len() as u32 - 1)
    }

    pub fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }

    /// Follows bindings at the top of `t` only.
    pub fn shallow(&self, t: &Type) -> Type {
        let mut cur = t.clone();
        while let Type::Infer(i) = cur {
            match &self.bindings[i as usize] {
                Some(b) => cur = b.clone(),
                None => return cur,
            }
        }
        cur
    }

    /// Substitutes all bound variables in `t`; unbound ones stay.
    pub fn resolve(&self, t: &Type) -> Type {
        match t {
            Type::Infer(i) => match &self.bindings[*i as usize] {
                Some(b) => self.resolve(b),
                None => t.clone(),
            },
            Type::Seq(e) => Type::seq(self.resolve(e)),
            Type::Set(e) => Type::set(self.resolve(e)),
            Type::Multiset(e) => Type::multiset(self.resolve(e)),
            Type::Map(k, v) => Type::map(self.resolve(k), self.resolve(v)),
            Type::Domain(n, a) => {
                Type::Domain(n.clone(), a.iter().map(|x| self.resolve(x)).collect())
            }
            Type::Adt(n, a) => Type::Adt(n.clone(), a.iter().map(|x| self.resolve(x)).collect()),
            _ => t.clone(),
        }
    }

    /// Binds every unbound variable occurring in `t` to Viper's default type, Int.
    pub fn default_free(&mut self, t: &Type) {
        match t {
            Type::Infer(i) => match self.bindings[*i as usize].clone() {
                Some(b) => self.default_free(&b),
                None => self.bindings[*i as usize] = Some(Type::Int),
            },
            Type::Seq(e) | Type::Set(e) | Type::Multiset(e) => self.default_free(e),
            Type::Map(k, v) => {
                self.default_free(k);
                self.default_free(v);
            }
            Type::Domain(_, a) | Type::Adt(_, a) => a.iter().for_each(|x| self.default_free(x)),
            _ => {}
        }
    }

    fn occurs(&self, v: u32, t: &Type) -> bool {
        match self.shallow(t) {
            Type::Infer(i) => i == v,
            Type::Seq(e) | Type::Set(e) | Type::Multiset(e) => self.occurs(v, &e),
            Type::Map(k, x) => self.occurs(v, &k) || self.occurs(v, &x),
            Type::Domain(_, a) | Type::Adt(_, a) => a.iter().any(|x| self.occurs(v, x)),
            _ => false,
        }
    }

    fn bind(&mut self, v: u32, t: Type) -> bool {
        if let Type::Infer(w) = t {
            if w == v {
                return true;
            }
            // Keep the stricter class on the variable that survives.
            if self.classes[v as usize] == VarClass::Numeric {
                self.classes[w as usize] = VarClass::Numeric;
            }
            self.bindings[v as usize] = Some(t);
            return true;
        }
        if self.classes[v as usize] == VarClass::Numeric
            && !matches!(t, Type::Int | Type::Perm | Type::Error)
        {
            return false;
        }
        if self.occurs(v, &t) {
            return false;
        }
        self.bindings[v as usize] = Some(t);
        true
    }

    /// Makes `a` and `b` equal, binding inference variables; `false` if impossible.
    /// The error type unifies with anything.
    pub fn unify(&mut self, a: &Type, b: &Type) -> bool {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (Type::Error, _) | (_, Type::Error) => true,
            (Type::Infer(v), _) => self.bind(*v, b.clone()),
            (_, Type::Infer(v)) => self.bind(*v, a.clone()),
            (Type::Seq(x), Type::Seq(y))
            | (Type::Set(x), Type::Set(y))
            | (Type::Multiset(x), Type::Multiset(y)) => self.unify(x, y),
            (Type::Map(k1, v1), Type::Map(k2, v2)) => self.unify(k1, k2) && self.unify(v1, v2),
            (Type::Domain(n1, a1), Type::Domain(n2, a2))
            | (Type::Adt(n1, a1), Type::Adt(n2, a2)) => {
                n1 == n2
                    && a1.len() == a2.len()
                    && a1.iter().zip(a2.iter()).all(|(x, y)| self.unify(x, y))
            }
            _ => a == b,
        }
    }

    /// Like [`Unifier::unify`] but undoes partial bindings on failure.
    pub fn try_unify(&mut self, a: &Type, b: &Type) -> bool {
        let saved_b = self.bindings.clone();
        let saved_c = self.classes.clone();
        if self.unify(a, b) {
            true
        } else {
            self.bindings = saved_b;
            self.classes = saved_c;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infers_element_type_from_expected() {
        let mut u = Unifier::default();
        let v = u.fresh(VarClass::Any);
        assert!(u.unify(&Type::seq(Type::Int), &Type::seq(v.clone())));
        assert_eq!(u.resolve(&v), Type::Int);
    }

    #[test]
    fn numeric_variables_reject_refs() {
        let mut u = Unifier::default();
        let v = u.fresh(VarClass::Numeric);
        assert!(!u.try_unify(&v, &Type::Ref));
        assert!(u.unify(&v, &Type::Perm));
        assert_eq!(u.resolve(&v), Type::Perm);
    }

    #[test]
    fn unbound_variables_default_to_int() {
        let mut u = Unifier::default();
        let v = u.fresh(VarClass::Any);
        let t = Type::set(v);
        u.default_free(&t);
        assert_eq!(u.resolve(&t), Type::set(Type::Int));
    }

    #[test]
    fn occurs_check_and_mismatch() {
        let mut u = Unifier::default();
        let v = u.fresh(VarClass::Any);
        assert!(!u.try_unify(&v, &Type::seq(v.clone())));
        assert!(!u.try_unify(&Type::Int, &Type::Bool));
        assert!(!u.try_unify(&Type::Bool, &Type::Wand));
        assert_eq!(
            Type::map(Type::Int, Type::Domain("D".into(), vec![Type::Bool])).to_string(),
            "Map[Int, D[Bool]]"
        );
    }
}
