//! Sorts (SMT-LIB types).

use std::sync::Arc;

use crate::symbol::Symbol;

/// An SMT-LIB sort. Cheap to clone (at most one reference count).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Sort {
    Bool,
    Int,
    Real,
    /// A sort introduced by `declare-sort` (arity 0).
    Uninterpreted(Symbol),
    /// `(Array index element)`.
    Array(Arc<(Sort, Sort)>),
    /// Sort text passed through verbatim, for Viper backend types such as `(_ BitVec 32)`,
    /// `(_ FloatingPoint 8 24)` or `RoundingMode`. The text must be one SMT-LIB sort.
    Raw(Arc<str>),
}

impl Sort {
    /// An uninterpreted sort named after a user name (mangled, see [`Symbol::user`]).
    pub fn named(name: &str) -> Sort {
        Sort::Uninterpreted(Symbol::user(name))
    }

    pub fn array(index: Sort, element: Sort) -> Sort {
        Sort::Array(Arc::new((index, element)))
    }

    /// `(_ BitVec width)`.
    pub fn bit_vec(width: u32) -> Sort {
        Sort::Raw(format!("(_ BitVec {width})").into())
    }

    /// `(_ FloatingPoint exponent significand)`.
    pub fn floating_point(exponent: u32, significand: u32) -> Sort {
        Sort::Raw(format!("(_ FloatingPoint {exponent} {significand})").into())
    }

    /// Verbatim sort text (see [`Sort::Raw`]).
    pub fn raw(text: &str) -> Sort {
        Sort::Raw(text.into())
    }

    /// Index and element sort, for array sorts.
    pub fn array_parts(&self) -> Option<(&Sort, &Sort)> {
        match self {
            Sort::Array(parts) => Some((&parts.0, &parts.1)),
            _ => None,
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(self, Sort::Int | Sort::Real)
    }
}
