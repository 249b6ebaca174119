//! What every back end shares, so that the driver, the result cache, the language server
//! and the output work with either one unchanged: Viper's error ids and wording
//! ([`errors`]), the options of a run ([`options`]: the solver, its deterministic budget,
//! which members, events), the budget of a query ([`budget`]), the members of a program and
//! the solver sessions they are verified in ([`members`]), and what a run found
//! ([`results`]). A back end takes a checked program and [`VerifyOptions`] and gives a
//! [`ProgramResult`]; it shares nothing else with the others.
//!
//! Architecture invariant: knows no encoding (no heap, permission, predicate or function
//! representation); never talks to a solver.

pub mod budget;
pub mod errors;
pub mod members;
pub mod options;
pub mod results;

pub use germanium_smt::Cancel;
pub use members::{members, sessions, Member, SessionSizes, BASE_SESSIONS, MIN_SESSION_MEMBERS};
pub use options::{Backend, MemberEvents, MemberFilter, VerifyOptions, DEFAULT_QUERY_TIMEOUT};
pub use results::{
    EventError, MemberEvent, MemberResult, MemberStats, ProgramResult, ResultSource,
};
