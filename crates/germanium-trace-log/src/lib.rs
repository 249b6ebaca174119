//! The execution log (`--trace FILE`) on disk, as JSON Lines (schema:
//! `docs/execution-log.md`).
//!
//! [`Writer`] makes one sink per worker; every sink appends whole lines to one shared file
//! as the engine runs, so records of parallel workers interleave but each line stands alone
//! (its ids are unique in the file, its parent and state named by id). [`Index`] reads a log
//! once, keeping only byte offsets, and then hands out single records, states and facts.
//!
//! Architecture invariant: writing a log never changes a verification result (the sinks
//! only observe), and a write error stops the log, not the verification.

mod index;
mod lines;
mod writer;

pub use index::{read_all, Index, MemberEntry, RecordEntry};
pub use lines::{ChunkLine, FactLine, FailureLine, Line, PlaceLine, RecordLine, StateLine};
pub use writer::Writer;
