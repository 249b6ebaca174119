//! Path conditions, one frame per solver scope: every `push`/`pop`/`assume` goes through
//! here so the Rust-side record and the solver never disagree.

use std::collections::HashMap;

use germanium_smt::{Op, Solver, SolverError, Term, TermKind};

use super::bounds::{bound_of, Interval};

#[derive(Debug)]
pub struct PathConditions {
    frames: Vec<Frame>,
    /// How many times each fact (and each conjunct of a fact) is on the path: answers
    /// "is this literally assumed?" without the solver.
    literal: HashMap<Term, u32>,
    /// The integer bounds literal facts put on terms (one entry per fact).
    bounds: HashMap<Term, Vec<Interval>>,
    /// Terms whose bounds a joined `if` tested on this path (see [`PathConditions::tested`]).
    tested: HashMap<Term, u32>,
}

/// What one solver scope added.
#[derive(Debug, Default)]
struct Frame {
    facts: Vec<Term>,
    tested: Vec<Term>,
}

impl Default for PathConditions {
    fn default() -> Self {
        PathConditions {
            frames: vec![Frame::default()],
            literal: HashMap::new(),
            bounds: HashMap::new(),
            tested: HashMap::new(),
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

fn decrement(counts: &mut HashMap<Term, u32>, key: &Term) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

impl PathConditions {
    pub fn push(&mut self, solver: &mut Solver) -> Result<(), SolverError> {
        solver.push()?;
        self.frames.push(Frame::default());
        Ok(())
    }

    pub fn pop(&mut self, solver: &mut Solver) -> Result<(), SolverError> {
        if self.frames.len() > 1 {
            if let Some(frame) = self.frames.pop() {
                for fact in &frame.facts {
                    self.forget(fact);
                }
                for term in &frame.tested {
                    decrement(&mut self.tested, term);
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
            if let Some((term, interval)) = bound_of(&part) {
                self.bounds.entry(term).or_default().push(interval);
            }
            *self.literal.entry(part).or_insert(0) += 1;
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.facts.push(fact);
        }
        Ok(())
    }

    /// How many facts the innermost scope holds: a mark for [`PathConditions::facts_since`].
    pub fn facts_mark(&self) -> usize {
        self.frames.last().map_or(0, |f| f.facts.len())
    }

    /// The facts the innermost scope gained since `mark` (the same scope).
    pub fn facts_since(&self, mark: usize) -> Vec<Term> {
        self.frames
            .last()
            .and_then(|f| f.facts.get(mark..))
            .map(<[Term]>::to_vec)
            .unwrap_or_default()
    }

    fn forget(&mut self, fact: &Term) {
        let mut parts = Vec::new();
        conjuncts(fact, &mut parts);
        for part in parts {
            if let Some((term, interval)) = bound_of(&part) {
                if let Some(list) = self.bounds.get_mut(&term) {
                    if let Some(i) = list.iter().rposition(|x| *x == interval) {
                        list.remove(i);
                    }
                    if list.is_empty() {
                        self.bounds.remove(&term);
                    }
                }
            }
            decrement(&mut self.literal, &part);
        }
    }

    /// Whether `fact` is literally on the path (assumed, or a conjunct of something
    /// assumed): a sufficient, solver-free test of entailment.
    pub fn assumes_literally(&self, fact: &Term) -> bool {
        fact.is_true() || self.literal.contains_key(fact)
    }

    /// Whether the literal facts on the path decide `fact` (an integer bound or its
    /// negation, or a literal fact): `Some(true)` if they imply it, `Some(false)` if they
    /// contradict it, `None` if they cannot tell.
    pub fn decides(&self, fact: &Term) -> Option<bool> {
        if self.assumes_literally(fact) {
            return Some(true);
        }
        if self.assumes_literally(&Term::not(fact.clone())) {
            return Some(false);
        }
        let (term, wanted) = bound_of(fact)?;
        let known = self
            .bounds
            .get(&term)?
            .iter()
            .fold(Interval::ANY, |acc, i| acc.meet(*i));
        wanted.decide(known)
    }

    /// Records that an `if` whose sides were joined tested the bounds of `fact`'s term.
    pub fn note_tested(&mut self, fact: &Term) {
        if let Some((term, _)) = bound_of(fact) {
            *self.tested.entry(term.clone()).or_insert(0) += 1;
            if let Some(frame) = self.frames.last_mut() {
                frame.tested.push(term);
            }
        }
    }

    /// Whether `fact` bounds a term this path already bounds or tested in a joined `if`.
    pub fn tests_again(&self, fact: &Term) -> bool {
        bound_of(fact).is_some_and(|(term, _)| {
            self.bounds.contains_key(&term) || self.tested.contains_key(&term)
        })
    }

    pub fn depth(&self) -> usize {
        self.frames.len() - 1
    }

    /// The facts assumed in the innermost scope.
    pub fn innermost(&self) -> &[Term] {
        self.frames.last().map_or(&[], |f| f.facts.as_slice())
    }

    /// The facts assumed in the scopes opened above `depth` (outermost first): what a path
    /// added since that depth, to be assumed again elsewhere.
    pub fn above(&self, depth: usize) -> Vec<Term> {
        self.frames
            .iter()
            .skip(depth + 1)
            .flat_map(|f| f.facts.iter().cloned())
            .collect()
    }

    /// Every fact on the current path (outermost first).
    pub fn all(&self) -> impl Iterator<Item = &Term> {
        self.frames.iter().flat_map(|f| f.facts.iter())
    }
}
