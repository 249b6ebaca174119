//! Semantic analysis of a parsed Viper program: name resolution, type checking and
//! consistency rules.
//!
//! The phases follow Viper's: name analysis errors (unknown or duplicate identifiers)
//! suppress type errors, and the consistency rules only run on well-typed programs.
//!
//! Architecture invariant: this crate never touches the file system, the solver or stdout.

pub mod auto_import;
pub mod calls;
mod check_expr;
mod check_members;
mod check_stmt;
mod checker;
mod consistency;
mod declarations;
mod numeric_ops;
pub mod semantics;
pub mod types;
pub mod visit;

use germanium_syntax::ast::Program;
use germanium_syntax::Diagnostic;

pub use semantics::*;
pub use types::Type;

/// Resolves names, type-checks and applies the consistency rules to a program whose macros
/// are expanded. `node_count` is the number of [`germanium_syntax::ast::NodeId`]s in use.
/// Returns `typechecker.error` / `consistency.error` diagnostics at the offending nodes.
pub fn check_program(program: &Program, node_count: usize) -> (Semantics, Vec<Diagnostic>) {
    check_program_under(program, node_count, &Rules::default())
}

/// Where a verifier option relaxes one of Viper's rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rules {
    /// Magic wands may occur in predicate bodies: with combinable wands, a fraction of a
    /// predicate instance holding a wand recombines soundly (Viper forbids wands there
    /// because standard wands do not).
    pub wands_in_predicates: bool,
}

/// [`check_program`] under `rules`.
pub fn check_program_under(
    program: &Program,
    node_count: usize,
    rules: &Rules,
) -> (Semantics, Vec<Diagnostic>) {
    let mut checker = checker::Checker::new(node_count);
    checker.wands_in_predicates = rules.wands_in_predicates;
    checker.register_globals(program);
    checker.collect_signatures(program);
    checker.check_members(program);
    if !checker.name_errors.is_empty() {
        let errors = std::mem::take(&mut checker.name_errors);
        return (checker.sem, errors);
    }
    if !checker.type_errors.is_empty() {
        let errors = std::mem::take(&mut checker.type_errors);
        return (checker.sem, errors);
    }
    let mut consistency = consistency::Consistency::new(&checker.sem);
    consistency.check_program(program);
    let errors = consistency.errors;
    (checker.sem, errors)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_numeric;
