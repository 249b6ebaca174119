//! Everything that can go wrong when talking to a solver, as values.

use std::path::PathBuf;
use std::time::Duration;

/// A failure of the solver interaction. `unknown` answers are *not* errors; they are
/// [`crate::SatResult::Unknown`].
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    /// No Z3 executable could be found.
    #[error("cannot find Z3: {0}")]
    NotFound(String),

    /// The executable exists but could not be started.
    #[error("cannot start Z3 at {path}: {source}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },

    /// The process exited or closed its output (crash, kill, out of memory).
    #[error("Z3 stopped while answering `{command}`: {detail}")]
    Died { command: String, detail: String },

    /// No complete answer within the wall-clock guard; the process has been killed.
    #[error("Z3 did not answer `{command}` within {waited:?}; the process was killed")]
    Unresponsive { command: String, waited: Duration },

    /// The answer did not fit the command (the process has been killed, since the
    /// conversation can no longer be trusted).
    #[error("unexpected answer from Z3 to `{command}`: {answer}")]
    Protocol { command: String, answer: String },

    /// Z3 rejected the command with `(error "...")`; the process is still usable and the
    /// command had no effect on the replay state.
    #[error("Z3 rejected `{command}`: {message}")]
    Rejected { command: String, message: String },

    /// The process is gone (after one of the errors above, or [`crate::Solver::stop`]);
    /// call [`crate::Solver::restart`].
    #[error("the Z3 process is not running; restart the solver")]
    NotRunning,

    /// A query was stopped by a limit that depends on the machine (the last-resort wall
    /// clock): its answer would depend on load, so it is no verdict. The solver process
    /// has been replaced and is usable.
    #[error("{0}: the query has no answer a quieter machine would also give, so no verdict")]
    MachineLimit(String),

    /// The run was cancelled ([`crate::config::Cancel`]); the process has been killed.
    #[error("cancelled while waiting for Z3's answer to `{command}`")]
    Cancelled { command: String },

    /// The API was used in a way the solver state forbids (e.g. popping below depth zero).
    #[error("invalid solver use: {0}")]
    Usage(String),

    /// The SMT log could not be written.
    #[error("cannot write SMT log {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SolverError {
    /// Whether the solver process is gone and must be restarted before further use.
    pub fn needs_restart(&self) -> bool {
        matches!(
            self,
            SolverError::Died { .. }
                | SolverError::Unresponsive { .. }
                | SolverError::Protocol { .. }
                | SolverError::Cancelled { .. }
                | SolverError::NotRunning
        )
    }
}

/// Shortens command or answer text for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    const LIMIT: usize = 200;
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= LIMIT {
        one_line
    } else {
        let cut: String = one_line.chars().take(LIMIT).collect();
        format!("{cut}...")
    }
}
