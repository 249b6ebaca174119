//! The decider on a real solver: a query the clock stops is no answer.

use std::time::Duration;

use germanium_smt::{FunDecl, Solver, SolverConfig, SolverError, Sort, Symbol, Term};

use super::{Budget, Decider};

/// `x^3 + y^3 = z^3` with `x, y, z > 1`: unsatisfiable, far beyond Z3's non-linear
/// arithmetic for a long time.
fn fermat(decider: &mut Decider) -> Term {
    let mut vars = Vec::new();
    for name in ["fx", "fy", "fz"] {
        let decl = FunDecl::constant(Symbol::user(name), Sort::Int);
        decider.declare(&decl).unwrap();
        vars.push(Term::constant(&decl));
    }
    let cube = |t: &Term| Term::mul(vec![t.clone(), t.clone(), t.clone()]);
    let mut facts: Vec<Term> = vars
        .iter()
        .map(|v| Term::gt(v.clone(), Term::int(1)))
        .collect();
    facts.push(Term::eq(
        Term::add(vec![cube(&vars[0]), cube(&vars[1])]),
        cube(&vars[2]),
    ));
    Term::and(facts)
}

/// A budget whose resource units outlast its wall clock by far: only the clock can stop.
fn clock_bound() -> Budget {
    Budget {
        timeout: Duration::from_secs(1),
        resources: u64::MAX / 2,
        wall_clock: Duration::from_millis(300),
    }
}

#[test]
fn a_query_the_clock_stops_is_a_machine_limit_not_a_failed_check() {
    let solver = Solver::new(SolverConfig::default()).expect("a solver starts");
    let mut decider = Decider::new(solver, clock_bound(), Sort::Bool);
    let hard = fermat(&mut decider);
    // Validity of `!hard` (it is valid): asked as whether `hard` is unsatisfiable.
    match decider.refutes(&hard) {
        Err(SolverError::MachineLimit(what)) => {
            assert!(what.contains("wall-clock"), "{what}");
            assert!(what.contains("machine load"), "{what}");
        }
        other => panic!("expected a machine limit, got {other:?}"),
    }
    // So is a feasibility check, whose `unknown` would otherwise count as feasible.
    assert!(matches!(
        decider.feasible(&hard),
        Err(SolverError::MachineLimit(_))
    ));
    // The process was replaced: the session goes on.
    assert!(decider.refutes(&Term::ff()).unwrap());
}

/// Pigeonhole: `n + 1` pigeons in `n` holes, as propositional clauses (unsatisfiable, and
/// Z3 needs real work to see it).
fn pigeonhole(decider: &mut Decider, n: usize) -> Term {
    let mut at = Vec::new();
    for p in 0..=n {
        let row: Vec<Term> = (0..n)
            .map(|h| {
                let decl = FunDecl::constant(Symbol::user(&format!("ph{p}_{h}")), Sort::Bool);
                decider.declare(&decl).unwrap();
                Term::constant(&decl)
            })
            .collect();
        at.push(row);
    }
    let mut facts: Vec<Term> = at.iter().map(|row| Term::or(row.clone())).collect();
    // No hole holds two pigeons.
    for h in 0..n {
        let hole: Vec<&Term> = at.iter().map(|row| &row[h]).collect();
        for (p, first) in hole.iter().enumerate() {
            for second in &hole[p + 1..] {
                facts.push(Term::not(Term::and([(*first).clone(), (*second).clone()])));
            }
        }
    }
    Term::and(facts)
}

#[test]
fn a_cheap_question_gets_a_feasibility_checks_share_of_the_budget() {
    let measuring = SolverConfig {
        measure_resources: true,
        ..SolverConfig::default()
    };
    // What the question costs, with all the budget it wants.
    let solver = Solver::new(measuring.clone()).expect("a solver starts");
    let mut decider = Decider::new(
        solver,
        Budget::from_timeout(Duration::from_secs(60)),
        Sort::Bool,
    );
    let hard = pigeonhole(&mut decider, 7);
    assert!(decider.refutes(&hard).unwrap());
    let cost = decider
        .solver_stats()
        .last_query_resources
        .expect("measured");
    // Twice that: enough for a validity query, not for a cheap one (a twentieth).
    let budget = Budget {
        resources: 2 * cost,
        ..Budget::from_timeout(Duration::from_secs(60))
    };
    let solver = Solver::new(measuring).expect("a solver starts");
    let mut decider = Decider::new(solver, budget, Sort::Bool);
    let hard = pigeonhole(&mut decider, 7);
    assert!(!decider.refutes_cheaply(&hard).unwrap());
    assert!(decider.refutes(&hard).unwrap());
    // What it can settle within its share, it does.
    assert!(decider.refutes_cheaply(&Term::ff()).unwrap());
}
