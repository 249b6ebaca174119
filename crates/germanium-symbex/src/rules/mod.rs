//! The rules of symbolic execution, in the shape of Silicon's: [`evaluate`] (expression →
//! term, with well-definedness checks), [`produce`] (assertion → added to the state),
//! [`consume`] (assertion → checked and removed), [`execute`] (statement → successor
//! states). The four are mutually recursive by nature; the recursion stays inside this
//! module. Beneath them: predicates (`predicates`, `snapshots`, `nesting`), functions
//! (`functions`, `function_bodies`, `function_axioms`, `unrolling_triggers`, `relevance`),
//! termination (`termination`, `predicate_measures`), quantified permissions (`quantified`,
//! `quantified_access`, `quantified_snapshots`), `goto` and loops made of
//! labels over the method's control-flow graph (`jumps`), and the smaller rules (`havoc`, `forperm`, `impure_assume`, `lenient`,
//! `allocation`, `call_targets`, `inhale_exhale`, `triggers`); [`access`] is their one way
//! onto resources; [`members`] runs a member's contract and body; [`context`] is the state
//! of one worker's rules.
//!
//! Architecture invariant: a member is reported verified only if every check on every path
//! was proved (`unsat`); `unknown`, budgets that ran out, solver crashes and unsupported
//! constructs become errors on the construct being checked.

mod access;
mod allocation;
mod call_targets;
mod consume;
pub mod context;
pub(crate) mod counterexample;
mod counterexample_values;
mod evaluate;
pub(crate) mod execute;
mod extract;
mod forperm;
mod function_axioms;
mod function_bodies;
mod functions;
mod havoc;
mod impure_assume;
mod inhale_exhale;
mod joins;
pub(crate) mod jumps;
mod lenient;
mod members;
mod nesting;
pub(crate) mod package;
mod predicate_measures;
mod predicates;
mod produce;
mod quantified;
mod quantified_access;
mod quantified_parts;
mod quantified_snapshots;
mod read_permissions;
mod relevance;
mod snapshots;
mod termination;
pub mod trace_scope;
mod triggers;
mod unrolling_triggers;
mod wands;

pub(crate) use produce::axiom_wildcard;
