//! The solver session's newer duties against a real Z3: deterministic resource limits per
//! query, the memory limit, rewinding to a checkpoint, and pipelined commands.

mod common;

use common::{config, int_const};
use germanium_smt::{
    FunDecl, QueryLimits, SatResult, Solver, SolverConfig, SolverError, Sort, Symbol, Term,
    OUT_OF_MEMORY,
};

/// `f(x) = g(x + 1)` and `g(x) = f(x + 1)` for every `x`, triggered on the left sides: each
/// instance makes a new term, a matching loop that only a limit stops.
fn matching_loop(solver: &mut Solver) {
    let f = FunDecl::new(Symbol::user("f"), vec![Sort::Int], Sort::Int);
    let g = FunDecl::new(Symbol::user("g"), vec![Sort::Int], Sort::Int);
    solver.declare_fun(&f).unwrap();
    solver.declare_fun(&g).unwrap();
    for (from, to) in [(&f, &g), (&g, &f)] {
        let x = Symbol::user("x");
        let xv = Term::var(x.clone(), Sort::Int);
        let lhs = Term::app(from, vec![xv.clone()]);
        let rhs = Term::app(to, vec![Term::add(vec![xv, Term::int(1)])]);
        solver
            .assert(&Term::forall(
                vec![(x, Sort::Int)],
                Term::eq(lhs.clone(), rhs),
                vec![vec![lhs]],
            ))
            .unwrap();
    }
    solver
        .assert(&Term::eq(Term::app(&f, vec![Term::int(0)]), Term::int(5)))
        .unwrap();
}

/// Z3's own defaults: without the verifier's instantiation bound the loop above runs on.
fn plain_config() -> SolverConfig {
    SolverConfig {
        options: Vec::new(),
        ..config()
    }
}

fn limits(rlimit: u64) -> QueryLimits {
    QueryLimits {
        timeout: Some(std::time::Duration::from_secs(60)),
        rlimit: Some(rlimit),
        ..QueryLimits::default()
    }
}

#[test]
fn the_resource_limit_bounds_each_query_not_the_session() {
    let mut solver = Solver::new(SolverConfig {
        measure_resources: true,
        ..config()
    })
    .unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    // Many small queries under a small per-query budget: none runs out, although together
    // they use far more than one budget.
    let mut used = 0;
    for i in 0..200 {
        solver.push().unwrap();
        solver.assert(&Term::eq(x.clone(), Term::int(i))).unwrap();
        assert_eq!(solver.check_sat(limits(5_000)).unwrap(), SatResult::Sat);
        used += solver.stats().last_query_resources.unwrap();
        solver.pop(1).unwrap();
    }
    assert!(used > 5_000, "{used}");
    // Commands after the queries are not canceled by the process's cumulative count.
    solver.push().unwrap();
    solver.pop(1).unwrap();
}

#[test]
fn a_query_that_runs_out_says_so_the_same_way_every_time() {
    let mut answers = Vec::new();
    for _ in 0..2 {
        let mut solver = Solver::new(plain_config()).unwrap();
        matching_loop(&mut solver);
        let answer = solver.check_sat(limits(500_000)).unwrap();
        // The solver is still usable afterwards.
        solver.push().unwrap();
        solver.assert(&Term::ff()).unwrap();
        assert!(solver.check_sat(limits(500_000)).unwrap().is_unsat());
        solver.pop(1).unwrap();
        answers.push(answer);
    }
    assert!(answers[0].is_resource_out(), "{answers:?}");
    assert_eq!(answers[0], answers[1]);
}

#[test]
fn rewinding_forgets_what_came_after_the_checkpoint() {
    let mut solver = Solver::new(config()).unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    solver.assert(&Term::gt(x.clone(), Term::int(0))).unwrap();
    solver.checkpoint().unwrap();
    let (y_decl, y) = int_const("y");
    solver.declare_fun(&y_decl).unwrap();
    solver.push().unwrap();
    solver.assert(&Term::lt(x.clone(), Term::int(0))).unwrap();
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_unsat());
    solver.rewind().unwrap();
    assert_eq!(solver.scope_depth(), 0);
    // The assertion before the checkpoint is kept, the later ones are gone, and `y` can be
    // declared again (it was forgotten).
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_sat());
    solver.declare_fun(&y_decl).unwrap();
    solver.assert(&Term::lt(x, y)).unwrap();
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_sat());
    // A restart replays the same state.
    solver.restart().unwrap();
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_sat());
}

#[test]
fn a_rejected_pipelined_command_is_reported_with_its_text() {
    let mut solver = Solver::new(SolverConfig {
        pipeline: true,
        ..config()
    })
    .unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    // Not answered yet: the error comes with the next command whose answer is needed.
    solver.raw("(assert (> undeclared_name 0))").unwrap();
    solver.assert(&Term::gt(x, Term::int(0))).unwrap();
    match solver.check_sat(QueryLimits::default()) {
        Err(SolverError::Rejected { command, .. }) => {
            assert!(command.contains("undeclared_name"), "{command}")
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    // The session goes on.
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_sat());
}

#[test]
fn the_memory_limit_ends_a_query_as_unknown_and_the_session_goes_on() {
    let mut solver = Solver::new(SolverConfig {
        memory_limit_mb: Some(64),
        ..plain_config()
    })
    .unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    solver.assert(&Term::gt(x, Term::int(0))).unwrap();
    solver.push().unwrap();
    matching_loop(&mut solver);
    let answer = solver.check_sat(limits(u64::from(u32::MAX))).unwrap();
    assert_eq!(answer, SatResult::Unknown(OUT_OF_MEMORY.into()));
    // The process was restarted in the state before the query: the scope is still open.
    assert_eq!(solver.scope_depth(), 1);
    solver.pop(1).unwrap();
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_sat());
}

/// `P(next(x)) == P(x)` triggered on `P(next(x))`, and a chain `c0, next(c0), ...` of
/// `depth` links with `P(c0)`: that `P` holds at the end takes an instantiation chain
/// `depth` generations deep.
fn deep_chain(solver: &mut Solver, depth: usize) -> Term {
    let s = Sort::Int;
    let p = FunDecl::new(Symbol::user("P"), vec![s.clone()], Sort::Bool);
    let next = FunDecl::new(Symbol::user("next"), vec![s.clone()], s.clone());
    solver.declare_fun(&p).unwrap();
    solver.declare_fun(&next).unwrap();
    let x = Symbol::user("x");
    let xv = Term::var(x.clone(), s.clone());
    let p_next = Term::app(&p, vec![Term::app(&next, vec![xv.clone()])]);
    solver
        .assert(&Term::forall(
            vec![(x, s.clone())],
            Term::iff(p_next.clone(), Term::app(&p, vec![xv])),
            vec![vec![p_next]],
        ))
        .unwrap();
    let (c0_decl, c0) = int_const("c0");
    solver.declare_fun(&c0_decl).unwrap();
    solver.assert(&Term::app(&p, vec![c0.clone()])).unwrap();
    let mut end = c0;
    for _ in 0..depth {
        end = Term::app(&next, vec![end]);
    }
    Term::app(&p, vec![end])
}

#[test]
fn a_quick_unknown_is_asked_again_with_deeper_instantiation_when_the_limits_say_so() {
    // The verifier's options: instances beyond a small depth are delayed.
    let mut solver = Solver::new(config()).unwrap();
    let goal = deep_chain(&mut solver, 300);
    let ask = |solver: &mut Solver, deepen: bool| {
        solver.push().unwrap();
        solver.assert(&Term::not(goal.clone())).unwrap();
        let answer = solver
            .check_sat(QueryLimits {
                deepen,
                ..limits(50_000_000)
            })
            .unwrap();
        solver.pop(1).unwrap();
        answer
    };
    assert!(
        matches!(ask(&mut solver, false), SatResult::Unknown(ref why) if why.contains("incomplete quantifiers"))
    );
    assert_eq!(ask(&mut solver, true), SatResult::Unsat);
    // The threshold is restored: the next query without the flag is as shallow as before.
    assert!(matches!(ask(&mut solver, false), SatResult::Unknown(_)));
}
