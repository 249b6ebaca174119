//! The SMT log: every command sent, one per line, and the solver's non-trivial answers as
//! `;` comments, so that `z3 FILE.smt2` replays the session. A restart appears as
//! `(reset)` followed by the replayed preamble and state. A command that got no answer
//! (the process died or was killed) is followed by a comment saying so; on replay, Z3 will
//! answer it, which the original session never saw.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::SolverError;

pub(crate) struct SmtLog {
    path: PathBuf,
    out: BufWriter<File>,
}

impl SmtLog {
    pub(crate) fn create(path: &Path) -> Result<SmtLog, SolverError> {
        let file = File::create(path).map_err(|source| SolverError::Log {
            path: path.to_path_buf(),
            source,
        })?;
        let mut log = SmtLog {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        };
        log.comment("SMT log written by germanium-smt; replay with `z3 FILE.smt2`.")?;
        log.comment("Answers other than `success` follow their command as comments.")?;
        Ok(log)
    }

    pub(crate) fn command(&mut self, text: &str) -> Result<(), SolverError> {
        let result = writeln!(self.out, "{text}");
        self.check(result)
    }

    /// An answer or remark, as comment lines.
    pub(crate) fn comment(&mut self, text: &str) -> Result<(), SolverError> {
        let mut result = Ok(());
        for line in text.lines() {
            result = result.and_then(|()| writeln!(self.out, "; {line}"));
        }
        self.check(result)
    }

    pub(crate) fn flush(&mut self) -> Result<(), SolverError> {
        let result = self.out.flush();
        self.check(result)
    }

    fn check(&self, result: std::io::Result<()>) -> Result<(), SolverError> {
        result.map_err(|source| SolverError::Log {
            path: self.path.clone(),
            source,
        })
    }
}
