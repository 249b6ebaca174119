//! The settings of one verification run, whichever back end runs it.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use germanium_smt::Cancel;

use crate::results::MemberEvent;

/// Which verifier runs (`--backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Symbolic execution (`germanium-symbex`), as Silicon.
    #[default]
    Symbex,
    /// Verification-condition generation (`germanium-vcg`), as Carbon.
    Vcg,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Symbex => "symbex",
            Backend::Vcg => "vcg",
        }
    }

    pub fn parse(text: &str) -> Option<Backend> {
        match text {
            "symbex" => Some(Backend::Symbex),
            "vcg" => Some(Backend::Vcg),
            _ => None,
        }
    }
}

/// Settings of one verification run.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    pub z3: Option<PathBuf>,
    /// Per-query timeout (default [`DEFAULT_QUERY_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// Base name of the SMT logs; worker `i` writes `<stem>.w<i>.smt2` (one worker: the
    /// file itself).
    pub smt_log: Option<PathBuf>,
    /// Worker threads (each with its own solver).
    pub jobs: usize,
    /// `if` branches one member may explore (default
    /// the engine's default).
    pub max_branches: Option<usize>,
    /// Combinable wands instead of standard ones (`--combinable-wands`).
    pub combinable_wands: bool,
    /// A counterexample for each failed check (`--counterexample`).
    pub counterexamples: bool,
    /// Told when each member starts and ends (`None`: nobody).
    pub events: Option<MemberEvents>,
    /// Which members to verify, by name (`None`: all). The others are not verified: a
    /// function left out has its postcondition as an axiom unless it is among
    /// `failed_functions`, which must name every one that fails (the driver verifies them
    /// first where nobody knows).
    pub members: Option<MemberFilter>,
    /// Functions known not to verify (from the result cache, or verified before a
    /// selection): their postconditions are never axioms, nor assumed at applications.
    pub failed_functions: HashSet<String>,
    /// Stops the run when set: no member starts afterwards and a solver waiting for an
    /// answer gives up; the result then has an `internal` error saying so.
    pub cancel: Option<Cancel>,
    /// Answers to solver queries kept between runs (the result cache's; see
    /// `germanium_smt::answers`): a query found there is not asked again.
    pub answers: Option<std::sync::Arc<dyn germanium_smt::AnswerStore>>,
    /// Count the solver's resource units per member for [`crate::MemberStats`] (`--stats`).
    pub stats: bool,
}

/// Says, by name, whether a member is to be verified (`--member`).
#[derive(Clone)]
pub struct MemberFilter(pub std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl std::fmt::Debug for MemberFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberFilter(..)")
    }
}

/// Where member events go (called from the worker threads).
#[derive(Clone)]
pub struct MemberEvents(pub std::sync::Arc<dyn Fn(MemberEvent) + Send + Sync>);

impl std::fmt::Debug for MemberEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberEvents(..)")
    }
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            z3: None,
            timeout: None,
            smt_log: None,
            jobs: 1,
            max_branches: None,
            combinable_wands: false,
            counterexamples: false,
            events: None,
            members: None,
            failed_functions: HashSet::new(),
            cancel: None,
            answers: None,
            stats: false,
        }
    }
}

/// The `--timeout` when the user sets none: a budget of about five seconds of solver work
/// per query (see [`crate::budget::Budget`]). The largest query of Viper's test suite that Z3 answers needs
/// about two.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(5);
