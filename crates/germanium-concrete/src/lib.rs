//! Viper over concrete values (issue 37): values ([`Value`]), a finite heap of objects with
//! field values, permission amounts and predicate instances ([`Heap`]), and an evaluator of
//! expressions and assertions over them ([`Evaluator`]), heap-dependent functions evaluated
//! by running their bodies, `old` and labelled states read from the heaps they name.
//!
//! It is the third opinion on a failure: a counterexample is *confirmed* only where running
//! the failing check on its values makes the check fail. It shares nothing with the symbolic
//! engine or the verification-condition generator but the front end.
//!
//! Architecture invariant: never claims more than it computed. Where a value cannot be
//! computed concretely (an unbounded quantifier, a domain function without interpretation,
//! an abstract function, recursion past its fuel) the answer is [`Stop::Unknown`], never a
//! guess; where Viper's well-definedness fails (a missing permission, an index out of
//! bounds, a division by zero) it is [`Stop::Undefined`] with the place.

mod eval;
mod exec;
mod heap;
mod search;
#[cfg(test)]
mod testing;
mod value;

pub use eval::{DomainModel, Evaluator, State, Stop, Table, ASSERTING_FAILED};
pub use exec::{Check, Choices, Failure, Machine, Outcome};
pub use heap::{Heap, ObjectId};
pub use num_rational::BigRational;
pub use search::{search, Found};
pub use value::{DomainNames, Value};
