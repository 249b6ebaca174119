//! Printing reports: one module per `--format`.

pub mod human;
pub mod json;
