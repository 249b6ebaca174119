//! Path conditions, one frame per solver scope: every `push`/`pop`/`assume` goes through
//! here so the Rust-side record and the solver never disagree.

use germanium_smt::{Solver, SolverError, Term};

#[derive(Debug)]
pub struct PathConditions {
    frames: Vec<Vec<Term>>,
}

impl Default for PathConditions {
    fn default() -> Self {
        PathConditions {
            frames: vec![Vec::new()],
        }
    }
}

impl PathConditions {
    pub fn push(&mut self, solver: &mut Solver) -> Result<(), SolverError> {
        solver.push()?;
        self.frames.push(Vec::new());
        Ok(())
    }

    pub fn pop(&mut self, solver: &mut Solver) -> Result<(), SolverError> {
        if self.frames.len() > 1 {
            self.frames.pop();
            solver.pop(1)?;
        }
        Ok(())
    }

    pub fn assume(&mut self, solver: &mut Solver, fact: Term) -> Result<(), SolverError> {
        if fact.is_true() {
            return Ok(());
        }
        solver.assert(&fact)?;
        if let Some(frame) = self.frames.last_mut() {
            frame.push(fact);
        }
        Ok(())
    }

    pub fn depth(&self) -> usize {
        self.frames.len() - 1
    }

    /// The facts assumed in the innermost scope.
    pub fn innermost(&self) -> &[Term] {
        self.frames.last().map_or(&[], |f| f.as_slice())
    }

    /// Every fact on the current path (outermost first).
    pub fn all(&self) -> impl Iterator<Item = &Term> {
        self.frames.iter().flatten()
    }
}
