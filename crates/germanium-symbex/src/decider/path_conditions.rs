//! Path conditions, one frame per solver scope: every `push`/`pop`/`assume` goes through
//! here so the Rust-side record and the solver never disagree.

use std::collections::HashMap;

use germanium_smt::{Op, Solver, SolverError, Term, TermKind};

#[derive(Debug)]
pub struct PathConditions {
    frames: Vec<Vec<Term>>,
    /// How many times each fact (and each conjunct of a fact) is on the path: answers
    /// "is this literally assumed?" without the solver.
    literal: HashMap<Term, u32>,
}

impl Default for PathConditions {
    fn default() -> Self {
        PathConditions {
            frames: vec![Vec::new()],
            literal: HashMap::new(),
        }
    }
}

/// A fact and, for a conjunction, its conjuncts (recursively).
fn conjuncts(fact: &Term, out: &mut Vec<Term>) {
    out.push(fact.clone());
    if let TermKind::Op(Op::And, parts) = fact.kind() {
        for part in parts {
            conjuncts(part, out);
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
            if let Some(frame) = self.frames.pop() {
                for fact in &frame {
                    self.forget(fact);
                }
            }
            solver.pop(1)?;
        }
        Ok(())
    }

    pub fn assume(&mut self, solver: &mut Solver, fact: Term) -> Result<(), SolverError> {
        if fact.is_true() {
            return Ok(());
        }
        solver.assert(&fact)?;
        let mut parts = Vec::new();
        conjuncts(&fact, &mut parts);
        for part in parts {
            *self.literal.entry(part).or_insert(0) += 1;
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.push(fact);
        }
        Ok(())
    }

    fn forget(&mut self, fact: &Term) {
        let mut parts = Vec::new();
        conjuncts(fact, &mut parts);
        for part in parts {
            if let Some(count) = self.literal.get_mut(&part) {
                *count -= 1;
                if *count == 0 {
                    self.literal.remove(&part);
                }
            }
        }
    }

    /// Whether `fact` is literally on the path (assumed, or a conjunct of something
    /// assumed): a sufficient, solver-free test of entailment.
    pub fn assumes_literally(&self, fact: &Term) -> bool {
        fact.is_true() || self.literal.contains_key(fact)
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
