//! What an action hands to `germanium action` on the worker and what it hands back: the
//! manifest (`manifest.json` in the input root) and the results (`results.json`, the
//! action's one output file). Plain data, read and written by both sides, so the worker
//! needs nothing but the Germanium binary it was given.

use serde::{Deserialize, Serialize};

/// The file of the input root that lists the action's jobs.
pub const MANIFEST: &str = "manifest.json";
/// The action's output file.
pub const RESULTS: &str = "results.json";
/// `germanium action`'s exit status when its results hold an error that may not happen
/// again (an `internal` one: a solver's failure, a wall clock): the results are written as
/// always, but a cluster must not cache them (REAPI servers cache only exit status 0).
pub const TRANSIENT_EXIT: i32 = 3;

/// The jobs of one action, each verified on its own (a program of its own, with its own
/// solver sessions).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub jobs: Vec<Job>,
}

/// Members to verify in one program: the file of the input root holding it (a member's
/// slice, or a whole program for a batch), and the functions whose postconditions must not
/// be trusted there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub file: String,
    pub members: Vec<String>,
    /// Sorted, so that equal jobs have equal bytes.
    pub failed_functions: Vec<String>,
}

/// What `results.json` holds: one result per member of each job, in the manifest's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Results {
    pub results: Vec<JobResult>,
}

/// One member's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobResult {
    pub member: String,
    /// The member's diagnostics: those inside its declaration, and those of the run that lie
    /// in no member of the job (such as a solver's error), which every member of it gets.
    pub diagnostics: Vec<JobDiagnostic>,
    /// The member's verification time on the worker, in milliseconds.
    pub time_ms: u64,
}

/// A diagnostic of a job, placed by byte offsets in the job's file (`None`: it lies in no
/// text of it, such as an error of the solver).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobDiagnostic {
    pub id: String,
    pub message: String,
    pub warning: bool,
    pub span: Option<(u32, u32)>,
}

impl Results {
    /// Reads `results.json`; an error says what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<Results, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable {RESULTS}: {e}"))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("serialising plain data cannot fail")
    }
}

impl Manifest {
    pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable {MANIFEST}: {e}"))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("serialising plain data cannot fail")
    }
}
