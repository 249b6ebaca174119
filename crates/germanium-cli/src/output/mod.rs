//! Printing reports: one module per `--format`, and the progress line.

pub mod human;
pub mod json;
pub mod progress;
pub mod stats;
pub mod stream;
