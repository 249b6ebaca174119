//! Germanium's syntax layer: source files and positions, diagnostics, the Viper lexer and
//! parser, the syntax tree, `define` macro expansion and import loading.
//!
//! Architecture invariant: this crate knows nothing about types, verification or the solver,
//! and never prints; problems are returned as [`Diagnostic`]s.

pub mod ast;
pub mod diagnostic;
pub mod span;

pub use diagnostic::{Counterexample, Diagnostic, Severity};
pub use span::{FileId, LineCol, SourceFile, SourceMap, Span};
pub mod lexer;
pub mod loader;
pub mod macros;
pub mod parser;
pub mod token;

pub use loader::{load_program, load_program_text};
pub use macros::expand_macros;
pub use parser::parse_file;
