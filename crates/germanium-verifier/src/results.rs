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
        /// The result came from the result cache (the driver's), not from verification.
        cached: bool,
    },
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
