//! What a run found, and the events it sends while it runs.

use std::collections::HashSet;
use std::time::Duration;

use germanium_syntax::{Diagnostic, SourceMap};

/// One verified member's errors (those its verification found, wherever they point).
#[derive(Clone, Debug, PartialEq)]
pub struct MemberResult {
    pub name: String,
    pub kind: &'static str,
    pub errors: Vec<Diagnostic>,
}

/// What [`verify_members`] found: each verified member's errors, in program order, and the
/// errors of no member (a solver that could not start, a cancelled run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramResult {
    pub members: Vec<MemberResult>,
    pub general: Vec<Diagnostic>,
    /// The functions whose postconditions were no axioms for the other members: those of
    /// `VerifyOptions::failed_functions`, those verified now with errors, and every function
    /// when a worker verifying functions could not start.
    pub failed_functions: HashSet<String>,
}

impl ProgramResult {
    /// Every error once, members' first (in program order).
    pub fn diagnostics(self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::new();
        let all = self.members.into_iter().flat_map(|m| m.errors);
        for d in all.chain(self.general) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }
}

/// A member's verification as it starts and ends, for streaming output and progress.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberEvent {
    Started {
        member: String,
        kind: &'static str,
    },
    Finished {
        member: String,
        kind: &'static str,
        errors: Vec<EventError>,
        time: Duration,
        /// Where the result came from: verified here, or from a cache, or from a cluster.
        source: ResultSource,
        /// Where the member's time went (`None` for a cached result).
        stats: Option<MemberStats>,
    },
}

/// Where a member's result came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultSource {
    /// Verified by this process.
    Local,
    /// The local result cache (`germanium-cache`).
    LocalCache,
    /// A remote cluster's action cache.
    RemoteCache,
    /// Executed on a remote cluster.
    Remote,
}

impl ResultSource {
    /// Whether no verification ran for it now.
    pub fn is_cached(self) -> bool {
        matches!(self, ResultSource::LocalCache | ResultSource::RemoteCache)
    }

    /// As machine output says it: `local`, `local-cache`, `remote-cache`, `remote`.
    pub fn name(self) -> &'static str {
        match self {
            ResultSource::Local => "local",
            ResultSource::LocalCache => "local-cache",
            ResultSource::RemoteCache => "remote-cache",
            ResultSource::Remote => "remote",
        }
    }
}

/// Where one member's verification time went (`--stats`). Everything but the resource
/// units is measured on every run; resource units only with [`VerifyOptions::stats`] (they
/// cost a solver round trip per query).
///
/// [`VerifyOptions::stats`]: crate::VerifyOptions::stats
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemberStats {
    /// Wall-clock time of the member's verification.
    pub time: Duration,
    /// Of that, the time spent waiting for the solver's answers.
    pub solver_time: Duration,
    /// Queries sent to the solver (`check-sat`).
    pub queries: u64,
    /// Z3 resource units (the unit of the deterministic budget) used by those queries.
    pub resources: u64,
    /// Bytes of SMT-LIB text sent to the solver.
    pub bytes_sent: u64,
}

impl MemberStats {
    /// The counters between two readings of a solver's statistics, and the time taken.
    pub fn between(
        before: &germanium_smt::SolverStats,
        after: &germanium_smt::SolverStats,
        time: Duration,
    ) -> MemberStats {
        MemberStats {
            time,
            solver_time: after.query_time.saturating_sub(before.query_time),
            queries: after.queries.saturating_sub(before.queries),
            resources: after.resources.saturating_sub(before.resources),
            bytes_sent: after.bytes_sent.saturating_sub(before.bytes_sent),
        }
    }

    /// The share of the time spent in the solver (0 to 1).
    pub fn solver_share(&self) -> f64 {
        let total = self.time.as_secs_f64();
        if total <= 0.0 {
            return 0.0;
        }
        (self.solver_time.as_secs_f64() / total).min(1.0)
    }
}

impl std::ops::AddAssign for MemberStats {
    fn add_assign(&mut self, other: MemberStats) {
        self.time += other.time;
        self.solver_time += other.solver_time;
        self.queries += other.queries;
        self.resources += other.resources;
        self.bytes_sent += other.bytes_sent;
    }
}

/// An error of a finished member, with its place resolved (the file's report comes later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventError {
    pub id: String,
    pub message: String,
    pub warning: bool,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

impl EventError {
    /// `d` with its place in `sources` resolved.
    pub fn of(sources: &SourceMap, d: &Diagnostic) -> EventError {
        let (start, end) = (sources.start(d.span), sources.end(d.span));
        EventError {
            id: d.id.clone(),
            message: d.message.clone(),
            warning: !d.is_error(),
            file: sources.get(d.span.file).path.display().to_string(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }
}
