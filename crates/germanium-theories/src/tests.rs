//! Shared test support for the theory layer: build the theories of a small Viper program,
//! load them into a real Z3, and check validity of formulas built with
//! [`Theories::apply`]. Every query must be answered within [`QUICK`] (a matching loop
//! would show up as a timeout). The per-theory tests are in `tests_*.rs`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) use crate::testing::{checked, checked_file};
use germanium_semantics::types::Type;
use germanium_smt::{FunDecl, QueryLimits, SatResult, Solver, SolverConfig, Symbol, Term};

use super::{Theories, TheoryOp};

/// Each query must be answered within this time.
pub(crate) const QUICK: Duration = Duration::from_secs(1);

/// Z3 from `Z3_EXE`, else the workspace's `.tools` copy; fails the test clearly otherwise.
pub(crate) fn z3_path() -> PathBuf {
    if let Some(p) = std::env::var_os("Z3_EXE") {
        return PathBuf::from(p);
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/z3-solver/bin/z3");
    assert!(
        local.is_file(),
        "these tests need Z3: set Z3_EXE or install it at {}",
        local.display()
    );
    local
}

pub(crate) fn solver() -> Solver {
    let config = SolverConfig {
        z3: Some(z3_path()),
        ..SolverConfig::default()
    };
    Solver::new(config).expect("Z3 starts")
}

/// A solver loaded with one program's theories.
pub(crate) struct Check {
    pub th: Theories,
    solver: Solver,
    constants: u32,
    /// Number of queries and the slowest answer, printed when the check is dropped.
    queries: u32,
    slowest: Duration,
}

impl Drop for Check {
    fn drop(&mut self) {
        eprintln!("{} queries, slowest {:?}", self.queries, self.slowest);
    }
}

impl Check {
    pub fn new(src: &str) -> Check {
        let (program, sem) = checked(src);
        let th = Theories::new(&program, &sem).expect("theories");
        assert!(th.problems().is_empty(), "problems: {:?}", th.problems());
        let mut solver = solver();
        th.declare_in(&mut solver).expect("Z3 accepts the preamble");
        let started = Instant::now();
        let answer = solver
            .check_sat(QueryLimits::timeout(Duration::from_secs(5)))
            .expect("check-sat");
        assert_ne!(
            answer,
            SatResult::Unsat,
            "the preamble alone is inconsistent"
        );
        assert!(
            started.elapsed() < QUICK,
            "the preamble alone took {:?}",
            started.elapsed()
        );
        Check {
            th,
            solver,
            constants: 0,
            queries: 0,
            slowest: Duration::ZERO,
        }
    }

    /// A fresh constant of a ground Viper type.
    pub fn constant(&mut self, name: &str, ty: &Type) -> Term {
        self.constants += 1;
        let sort = self.th.sort(ty).expect("sort");
        let decl = FunDecl::constant(Symbol::user(&format!("{name}!{}", self.constants)), sort);
        self.solver.declare_fun(&decl).expect("declare");
        Term::constant(&decl)
    }

    pub fn op(&self, op: TheoryOp, args: Vec<Term>) -> Term {
        self.th.apply(&op, args).expect("apply")
    }

    /// Whether `hyps ==> goal` is proved (the negation is `unsat`), answered within [`QUICK`].
    pub fn valid(&mut self, hyps: &[Term], goal: Term) -> bool {
        self.solver.push().expect("push");
        for h in hyps {
            self.solver.assert(h).expect("assert");
        }
        self.solver
            .assert(&Term::not(goal.clone()))
            .expect("assert");
        let started = Instant::now();
        let answer = self
            .solver
            .check_sat(QueryLimits::timeout(Duration::from_secs(5)))
            .expect("check-sat");
        let took = started.elapsed();
        self.solver.pop(1).expect("pop");
        self.queries += 1;
        self.slowest = self.slowest.max(took);
        assert!(
            took < QUICK,
            "query took {took:?} (answer {answer:?}): {goal}"
        );
        answer == SatResult::Unsat
    }
}

/// Shorthands for building goals.
pub(crate) fn int(n: i64) -> Term {
    Term::int(n)
}

pub(crate) fn seq_int() -> Type {
    Type::seq(Type::Int)
}
