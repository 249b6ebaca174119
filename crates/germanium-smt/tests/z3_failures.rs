//! Timeouts, crashes, garbage and rejections against a real (or deliberately fake) Z3.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{config, hard_formula, int_const, kill_process, remove_scratch_file, scratch_file};
use germanium_smt::{
    FunDecl, QueryLimits, SatResult, Solver, SolverConfig, SolverError, Sort, Symbol, Term,
};

/// A solver with `x > 0` at level 0 and `x < 10` at level 1.
fn solver_with_state(config: SolverConfig) -> (Solver, Term) {
    let mut solver = Solver::new(config).unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    solver.assert(&Term::gt(x.clone(), Term::int(0))).unwrap();
    solver.push().unwrap();
    solver.assert(&Term::lt(x.clone(), Term::int(10))).unwrap();
    (solver, x)
}

/// Checks that the state of [`solver_with_state`] is in place at depth 1.
fn assert_state_intact(solver: &mut Solver, x: &Term) {
    assert_eq!(solver.scope_depth(), 1);
    solver.push().unwrap();
    solver.assert(&Term::ge(x.clone(), Term::int(10))).unwrap();
    assert!(
        solver.check_sat(QueryLimits::default()).unwrap().is_unsat(),
        "x < 10 was replayed"
    );
    solver.pop(1).unwrap();
    solver.push().unwrap();
    solver.assert(&Term::le(x.clone(), Term::int(0))).unwrap();
    assert!(
        solver.check_sat(QueryLimits::default()).unwrap().is_unsat(),
        "x > 0 was replayed"
    );
    solver.pop(1).unwrap();
    assert!(solver.check_sat(QueryLimits::default()).unwrap().is_sat());
}

fn declare_hard_problem(solver: &mut Solver) -> Term {
    let mut terms = Vec::new();
    for name in ["hx", "hy", "hz"] {
        let (decl, term) = int_const(name);
        solver.declare_fun(&decl).unwrap();
        terms.push(term);
    }
    hard_formula(&terms[0], &terms[1], &terms[2])
}

#[test]
fn a_timeout_is_unknown_and_the_solver_stays_usable() {
    let (mut solver, x) = solver_with_state(config());
    let hard = declare_hard_problem(&mut solver);
    solver.push().unwrap();
    solver.assert(&hard).unwrap();
    let started = Instant::now();
    let result = solver
        .check_sat(QueryLimits::timeout(Duration::from_millis(300)))
        .unwrap();
    let elapsed = started.elapsed();
    assert!(matches!(result, SatResult::Unknown(_)), "{result:?}");
    assert!(result.is_resource_out(), "{result:?}");
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    solver.pop(1).unwrap();
    assert_state_intact(&mut solver, &x);
}

#[test]
fn a_resource_limit_is_unknown() {
    let (mut solver, _) = solver_with_state(config());
    let hard = declare_hard_problem(&mut solver);
    solver.push().unwrap();
    solver.assert(&hard).unwrap();
    let limits = QueryLimits {
        timeout: None,
        rlimit: Some(20_000),
        ..QueryLimits::default()
    };
    let result = solver.check_sat(limits).unwrap();
    assert!(result.is_resource_out(), "{result:?}");
    solver.pop(1).unwrap();
    // The limit applies per query: an easy query afterwards still succeeds.
    assert!(solver.check_sat(limits).unwrap().is_sat());
}

#[test]
fn the_wall_clock_guard_kills_a_process_that_does_not_answer() {
    // No solver timeout at all, so only our guard can end the query.
    let guarded = SolverConfig {
        untimed_query_guard: Some(Duration::from_millis(400)),
        ..config()
    };
    let (mut solver, x) = solver_with_state(guarded);
    let hard = declare_hard_problem(&mut solver);
    solver.push().unwrap();
    solver.assert(&hard).unwrap();
    let started = Instant::now();
    let err = solver.check_sat(QueryLimits::default()).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(matches!(err, SolverError::Unresponsive { .. }), "{err}");
    assert!(err.needs_restart());
    assert!(!solver.is_running());
    assert!(matches!(
        solver.check_sat(QueryLimits::default()),
        Err(SolverError::NotRunning)
    ));

    solver.restart().unwrap();
    assert_eq!(
        solver.scope_depth(),
        2,
        "the scope with the hard formula is replayed too"
    );
    solver.pop(1).unwrap();
    assert_state_intact(&mut solver, &x);
    assert_eq!(solver.stats().restarts, 1);
}

/// A wall clock kept on our side only (Z3's `:timeout` stays off): past it the process is
/// replaced, in the state it had, and the query is `unknown` for `timeout`.
#[test]
fn our_wall_clock_gives_unknown_in_a_fresh_process() {
    let (mut solver, x) = solver_with_state(config());
    let hard = declare_hard_problem(&mut solver);
    solver.push().unwrap();
    solver.assert(&hard).unwrap();
    let limits = QueryLimits {
        wall_clock: Some(Duration::from_millis(400)),
        ..QueryLimits::default()
    };
    let started = Instant::now();
    let result = solver.check_sat(limits).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(result.is_resource_out(), "{result:?}");
    assert!(solver.is_running());
    assert_eq!(solver.stats().restarts, 1);
    assert_eq!(
        solver.scope_depth(),
        2,
        "the scope of the query is still open"
    );
    solver.pop(1).unwrap();
    assert_state_intact(&mut solver, &x);
}

#[test]
fn a_killed_process_is_reported_and_can_be_restarted() {
    let (mut solver, x) = solver_with_state(config());
    // A declaration made inside a scope that is later popped must still be replayed.
    solver.push().unwrap();
    let (y_decl, y) = int_const("y");
    solver.declare_fun(&y_decl).unwrap();
    solver.pop(1).unwrap();

    let pid = solver.process_id().unwrap();
    kill_process(pid);
    let err = solver.check_sat(QueryLimits::default()).unwrap_err();
    assert!(matches!(err, SolverError::Died { .. }), "{err}");
    assert!(err.needs_restart());
    assert!(err.to_string().contains("check-sat"), "{err}");

    solver.restart().unwrap();
    assert_ne!(solver.process_id(), Some(pid));
    solver.assert(&Term::eq(y, Term::int(3))).unwrap();
    assert_state_intact(&mut solver, &x);
}

#[test]
fn a_rejected_command_keeps_the_process_and_is_not_replayed() {
    let (mut solver, x) = solver_with_state(config());
    let undeclared = FunDecl::constant(Symbol::user("nowhere"), Sort::Int);
    let err = solver
        .assert(&Term::eq(Term::constant(&undeclared), Term::int(1)))
        .unwrap_err();
    match &err {
        SolverError::Rejected { message, .. } => assert!(message.contains("nowhere"), "{message}"),
        other => panic!("expected a rejection, got {other}"),
    }
    assert!(!err.needs_restart());
    assert!(solver.is_running());
    assert_state_intact(&mut solver, &x);
    // If the rejected assertion were replayed, the restart would fail.
    solver.restart().unwrap();
    assert_state_intact(&mut solver, &x);
}

/// Writes an executable shell script standing in for Z3.
fn fake_z3(name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = scratch_file(name);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn garbage_answers_are_protocol_errors() {
    let answers_banana = fake_z3(
        "banana-z3",
        r#"while read -r line; do case "$line" in *check-sat*) echo banana;; *) echo success;; esac; done"#,
    );
    let mut solver = Solver::new(SolverConfig {
        z3: Some(answers_banana),
        ..config()
    })
    .unwrap();
    solver.assert(&Term::tt()).unwrap();
    let err = solver.check_sat(QueryLimits::default()).unwrap_err();
    assert!(matches!(err, SolverError::Protocol { .. }), "{err}");
    assert!(err.to_string().contains("banana"), "{err}");
    assert!(!solver.is_running());

    let silent = fake_z3("silent-z3", "exec sleep 30");
    let guarded = SolverConfig {
        z3: Some(silent),
        command_guard: Duration::from_millis(300),
        ..config()
    };
    let err = Solver::new(guarded)
        .err()
        .expect("a mute process cannot start a session");
    assert!(matches!(err, SolverError::Unresponsive { .. }), "{err}");

    let dies = fake_z3("dying-z3", "echo 'fatal: out of luck' >&2; exit 3");
    let err = Solver::new(SolverConfig {
        z3: Some(dies),
        ..config()
    })
    .err()
    .expect("dead on arrival");
    assert!(matches!(err, SolverError::Died { .. }), "{err}");
    assert!(
        err.to_string().contains("out of luck"),
        "stderr is reported: {err}"
    );
    for name in ["banana-z3", "silent-z3", "dying-z3"] {
        remove_scratch_file(&scratch_file(name));
    }
}

#[test]
fn a_missing_z3_is_a_clear_error() {
    let missing = SolverConfig {
        z3: Some("/no/such/z3".into()),
        ..config()
    };
    let err = Solver::new(missing).err().expect("no solver without Z3");
    assert!(matches!(err, SolverError::NotFound(_)), "{err}");
    assert!(err.to_string().contains("/no/such/z3"), "{err}");
}

#[test]
fn dropping_the_solver_ends_the_process() {
    let solver = Solver::new(config()).unwrap();
    let pid = solver.process_id().unwrap();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    drop(solver);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "process {pid} still exists"
    );
}
