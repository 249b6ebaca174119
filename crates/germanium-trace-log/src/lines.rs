//! The lines of a log file: one JSON object each, told apart by `type`.

use serde::{Deserialize, Serialize};

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Line {
    /// The first line: the log's format version.
    Log {
        version: u32,
    },
    /// A path condition's text, given before the first state that lists it.
    Fact(FactLine),
    /// A state, given before the first record that applies to it.
    State(StateLine),
    Record(RecordLine),
    /// A failed check inside a record.
    Failure(FailureLine),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactLine {
    pub id: u64,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateLine {
    pub id: u64,
    /// Variable and value.
    pub store: Vec<(String, String)>,
    pub heap: Vec<ChunkLine>,
    /// The path conditions, outermost first, by fact id.
    pub path: Vec<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkLine {
    pub kind: String,
    pub name: String,
    pub args: Vec<String>,
    pub amount: String,
    pub snapshot: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceLine {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

impl From<&germanium_symbex::trace::Place> for PlaceLine {
    fn from(p: &germanium_symbex::trace::Place) -> PlaceLine {
        PlaceLine {
            file: p.file.clone(),
            line: p.line,
            column: p.column,
            end_line: p.end_line,
            end_column: p.end_column,
        }
    }
}

/// An error's place, once resolved (the debugger's diagnostics).
impl From<&germanium_verifier::EventError> for PlaceLine {
    fn from(e: &germanium_verifier::EventError) -> PlaceLine {
        PlaceLine {
            file: e.file.clone(),
            line: e.line,
            column: e.column,
            end_line: e.end_line,
            end_column: e.end_column,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordLine {
    pub id: u64,
    /// The enclosing record (`None` for a member's root record).
    pub parent: Option<u64>,
    /// The member the record belongs to.
    pub member: String,
    /// `member`, `evaluate`, `produce`, `consume`, `execute` or `branch`.
    pub step: String,
    pub detail: String,
    /// Open solver scopes.
    pub depth: usize,
    pub place: Option<PlaceLine>,
    /// The state the record applies to.
    pub state: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureLine {
    /// The record the check failed in.
    pub record: u64,
    pub member: String,
    /// Viper's error identifier, and the message.
    pub error: String,
    pub message: String,
    pub place: Option<PlaceLine>,
    /// The query the solver could not refute, as SMT-LIB.
    pub query: Option<String>,
}
