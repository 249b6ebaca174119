//! Germanium's interface to SMT solvers: terms, sorts and commands as Rust types, one
//! printer for SMT-LIB 2, and Z3 processes spoken to over pipes.
//!
//! Map of the crate, in the order data flows:
//! - [`symbol`]: symbols, mangling of user names, fresh names, `|...|` quoting;
//! - [`sort`], [`literal`], [`term`]: the data; [`build`]: term constructors that simplify;
//! - [`command`]: SMT-LIB commands; [`printer`]: the one place that prints SMT-LIB text
//!   (`sharing`: which big repeated subterms of an assertion it binds by `let`);
//! - [`sexpr`], [`model`]: reading the solver's answers back;
//! - [`config`]: finding Z3 and choosing its options; `process` and `log` (private): the
//!   child process and the replayable SMT log; [`session`]: [`Solver`], the scope stack,
//!   queries, errors, restart and replay; [`answers`]: keys under which answers are kept
//!   between runs.
//!
//! Architecture invariants:
//! - **Only this crate spawns solver processes**, and every process it spawns is killed when
//!   its [`Solver`] is dropped or stopped.
//! - **Nothing here prints to stdout or stderr**; the only file written is the SMT log the
//!   caller asked for.
//! - **No panics on solver behaviour**: a crash, garbage, an error answer or a hang becomes a
//!   [`SolverError`]; `unknown` is a [`SatResult`], not an error.
//! - **Everything sent to the solver is printed by [`printer`]** and goes through the log, so
//!   a log replays with `z3 FILE.smt2` to the same answers (modulo timeouts).
//! - **Names cannot clash**: user names, fresh names (`base@N`) and SMT-LIB/Z3 built-ins are
//!   disjoint by construction (see [`symbol`]).
//! - **Simplifications are sound in every SMT-LIB model** (see [`build`]).
//! - Terms are immutable and `Send + Sync`; a [`Solver`] is `Send` and meant to be owned by
//!   one worker thread; run one per worker for parallelism.
//!
//! A typical verifier step (prove `x + 1 > x` under the current path conditions):
//!
//! ```no_run
//! use germanium_smt::{FunDecl, QueryLimits, SatResult, Solver, SolverConfig, Sort, Symbol, Term};
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), germanium_smt::SolverError> {
//! let mut solver = Solver::new(SolverConfig::default())?; // --z3, else $Z3_EXE, else PATH
//! let x = FunDecl::constant(Symbol::user("x"), Sort::Int);
//! solver.declare_fun(&x)?;
//! let x = Term::constant(&x);
//! let goal = Term::gt(Term::add(vec![x.clone(), Term::int(1)]), x);
//! solver.push()?;
//! solver.assert(&Term::not(goal))?;
//! let proved = solver.check_sat(QueryLimits::timeout(Duration::from_secs(10)))? == SatResult::Unsat;
//! solver.pop(1)?;
//! assert!(proved);
//! # Ok(()) }
//! ```

pub mod answers;
pub mod build;
pub mod command;
pub mod config;
pub mod error;
pub mod literal;
mod log;
pub mod model;
pub mod printer;
mod process;
pub mod session;
pub mod sexpr;
mod sharing;
pub mod sort;
mod substitute;
pub mod symbol;
pub mod term;

pub use answers::{AnswerStore, QueryKey};
pub use command::{Command, OptionValue, SmtOption};
pub use config::{
    locate_z3, verifier_options, z3_version, Cancel, SolverConfig, OLDEST_Z3, OUT_OF_MEMORY,
    Z3_ENV_VAR,
};
pub use error::SolverError;
pub use literal::{IntLit, RealLit};
pub use model::{Model, Value};
pub use session::{QueryLimits, SatResult, Solver, SolverStats};
pub use sexpr::SExpr;
pub use sort::Sort;
pub use substitute::{alpha_normal, rebuild_op, substitute};
pub use symbol::{NameGenerator, Symbol};
pub use term::{FunDecl, Op, Quantifier, QuantifierKind, Term, TermKind};
