//! Runs the stages of Germanium over one input file and collects a report: load (read and
//! parse the file and its imports) → expand macros → check (resolve names, types and
//! consistency rules) → verify.
//!
//! The stages run on a thread with a large stack, because parsing and checking recurse and
//! deep but legal programs must not overflow; a panic in any stage becomes an `internal`
//! diagnostic with result [`Outcome::Error`], so no file's result is ever lost.
//!
//! Architecture invariant: the driver never prints; it returns [`FileReport`]s.

mod backends;
mod cached;
mod confirm;
mod pipeline;
mod remote;

use std::path::{Path, PathBuf};
use std::time::Duration;

use germanium_syntax::ast::Program;
use germanium_syntax::{Diagnostic, SourceMap};

pub use cached::CacheSettings;
pub use germanium_remote::{protocol, EndpointSettings, RemoteSettings};
pub use germanium_verifier::{
    Backend, Cancel, EventError, MemberEvent, MemberEvents, MemberFilter, MemberStats, ResultSource,
};
pub use pipeline::{run_file, run_text};
pub use remote::{run_action, run_jobs, slice_job, Job, RemoteOptions};

/// What to do with each file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Parse and type-check only.
    Check,
    /// Parse, type-check and verify.
    Verify,
}

/// Settings shared by all files of one run.
#[derive(Clone, Debug)]
pub struct Options {
    pub mode: Mode,
    /// Directories searched, in order, for `import <...>` after the built-in library.
    pub import_paths: Vec<PathBuf>,
    /// The Z3 executable for verification (`None`: `Z3_EXE`, then `z3` on the `PATH`).
    pub z3: Option<PathBuf>,
    /// Time limit per verification query.
    pub timeout: Option<Duration>,
    /// Where to write the SMT-LIB queries sent to the solver.
    pub smt_log: Option<PathBuf>,
    /// Stack size of the thread running the front end.
    pub stack_size: usize,
    /// Verification worker threads per file (each with its own solver).
    pub jobs: usize,
    /// `if` branches one member may explore (`None`: the verifier's default).
    pub max_branches: Option<usize>,
    /// Combinable wands instead of standard ones.
    pub combinable_wands: bool,
    /// A counterexample for each failed check.
    pub counterexamples: bool,
    /// Which verifier runs (`--backend`).
    pub backend: Backend,
    /// Both verifiers on every member, disagreements reported (`--cross-check`).
    pub cross_check: bool,
    /// Makes each verification worker's execution-log sink (`None`: no log).
    pub trace: Option<germanium_symbex::TraceSinks>,
    /// Told when each member starts and ends (streaming output, progress).
    pub events: Option<MemberEvents>,
    /// Which members to verify (`--member`; `None`: all).
    pub members: Option<MemberFilter>,
    /// Why Z3 cannot be used, found once before any file (see [`check_solver`]): a file
    /// that gets to verification reports it as an `internal` error instead.
    pub solver_problem: Option<String>,
    /// The per-member result cache (`None`: every member is verified).
    pub cache: Option<CacheSettings>,
    /// Stops verification when set (a language server's stale run); the report then has
    /// an `internal` error and is not stored in the cache.
    pub cancel: Option<Cancel>,
    /// Count solver resource units per member for the members' statistics (`--stats`).
    pub stats: bool,
    /// The functions known to fail among those `members` leaves out, all of them
    /// (`Some`: a remote action's slice, where functions left without a body stand for
    /// ones not yet verified). `None`: not known, so a selection by `members` first
    /// verifies the functions with a body it leaves out, quietly, to learn which fail: a
    /// postcondition that does not hold is never assumed.
    pub failed_functions: Option<std::collections::BTreeSet<String>>,
    /// Verify on a Remote Execution API cluster (`--remote-executor`, `--remote-cache`).
    pub remote: Option<RemoteOptions>,
}

/// Big enough for programs nested thousands of levels deep.
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024 * 1024;

impl Options {
    pub fn new(mode: Mode) -> Self {
        Options {
            mode,
            import_paths: Vec::new(),
            z3: None,
            timeout: None,
            smt_log: None,
            stack_size: DEFAULT_STACK_SIZE,
            jobs: 1,
            max_branches: None,
            combinable_wands: false,
            counterexamples: false,
            backend: Backend::Symbex,
            cross_check: false,
            trace: None,
            events: None,
            members: None,
            solver_problem: None,
            cache: None,
            cancel: None,
            stats: false,
            failed_functions: None,
            remote: None,
        }
    }
}

/// The verdict on one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every check that was asked for was carried out and succeeded.
    Verified,
    /// The program has errors (parse, type, consistency or verification errors).
    Failed,
    /// Germanium could not finish (internal fault, unsupported feature, no solver); the reason
    /// is among the diagnostics with id `internal` or `internal:...`.
    Error,
}

impl Outcome {
    /// The word used in machine output: `verified`, `failed`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Failed => "failed",
            Outcome::Error => "error",
        }
    }
}

/// How far the pipeline got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Load,
    ExpandMacros,
    Check,
    Verify,
}

/// Everything known about one file after a run.
#[derive(Debug)]
pub struct FileReport {
    pub path: PathBuf,
    pub result: Outcome,
    /// In the order the stages reported them.
    pub diagnostics: Vec<Diagnostic>,
    /// The main file and everything it imported; spans in `diagnostics` point into it.
    pub sources: SourceMap,
    /// The program as far as it was built (after macro expansion if that stage was reached);
    /// `None` only if loading itself failed with a panic.
    pub program: Option<Program>,
    /// The last stage that ran.
    pub stage: Stage,
    /// The back end that verified the file (`None`: verification did not run).
    pub backend: Option<Backend>,
    /// Both back ends verified it (`--cross-check`).
    pub cross_checked: bool,
    pub time: Duration,
}

impl FileReport {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The result as output says it: `verified`, `failed`, `error`, or `checked` for a
    /// file that is well-formed but was not verified (`germanium check`).
    pub fn result_word(&self) -> &'static str {
        match self.result {
            Outcome::Verified if self.stage < Stage::Verify => "checked",
            other => other.as_str(),
        }
    }
}

/// The Z3 verification would use (`explicit`, else `$Z3_EXE`, else `z3` on the `PATH`),
/// checked once before any file is verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolverCheck {
    pub path: PathBuf,
    pub version: (u32, u32, u32),
    /// Older than the oldest Z3 Germanium is known to work with.
    pub too_old: bool,
}

/// Finds the Z3 verification would use and asks its version: an error says why it cannot
/// be used (none found, not executable, not a Z3), once, before any file is verified.
pub fn check_solver(explicit: Option<&Path>) -> Result<SolverCheck, String> {
    let path = germanium_smt::locate_z3(explicit).map_err(|e| e.to_string())?;
    let version = germanium_smt::z3_version(&path).map_err(|e| e.to_string())?;
    Ok(SolverCheck {
        too_old: version < germanium_smt::OLDEST_Z3,
        path,
        version,
    })
}
