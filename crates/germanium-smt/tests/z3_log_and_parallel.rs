//! The SMT log replays with Z3 to the same answers; solvers run in parallel; throughput.

mod common;

use std::process::Command as Process;
use std::time::{Duration, Instant};

use common::{config, int_const, kill_process, remove_scratch_file, scratch_file, z3_path};
use germanium_smt::model::values_from_sexpr;
use germanium_smt::sexpr::{parse_one, Framer};
use germanium_smt::{QueryLimits, SatResult, Solver, SolverConfig, Term, Value};

fn answer_text(result: &SatResult) -> &'static str {
    match result {
        SatResult::Sat => "sat",
        SatResult::Unsat => "unsat",
        SatResult::Unknown(_) => "unknown",
    }
}

#[test]
fn the_log_replays_to_the_same_answers() {
    let log_path = scratch_file("replay.smt2");
    let mut answers: Vec<&str> = Vec::new();
    let values: Vec<Value>;
    {
        let mut solver = Solver::new(SolverConfig {
            log: Some(log_path.clone()),
            ..config()
        })
        .unwrap();
        let (x_decl, x) = int_const("x");
        let (y_decl, y) = int_const("odd name|y");
        solver.declare_fun(&x_decl).unwrap();
        solver.declare_fun(&y_decl).unwrap();
        solver.assert(&Term::gt(x.clone(), Term::int(3))).unwrap();
        answers.push(answer_text(
            &solver.check_sat(QueryLimits::default()).unwrap(),
        ));
        solver.push().unwrap();
        solver.assert(&Term::lt(x.clone(), Term::int(2))).unwrap();
        let limits = QueryLimits::timeout(Duration::from_secs(5));
        answers.push(answer_text(&solver.check_sat(limits).unwrap()));
        solver.pop(1).unwrap();
        solver
            .assert(&Term::eq(
                y.clone(),
                Term::mul(vec![x.clone(), Term::int(2)]),
            ))
            .unwrap();
        solver.assert(&Term::lt(x.clone(), Term::int(5))).unwrap();
        answers.push(answer_text(&solver.check_sat(limits).unwrap()));
        values = solver.get_value(&[x.clone(), y.clone()]).unwrap();
        assert_eq!(values, vec![Value::Int(4.into()), Value::Int(8.into())]);

        // A crash between commands, then a restart that replays into the same log.
        kill_process(solver.process_id().unwrap());
        assert!(solver.assert(&Term::tt()).is_err());
        solver.restart().unwrap();
        answers.push(answer_text(
            &solver
                .check_sat_assuming(&[Term::gt(x.clone(), Term::int(4))], limits)
                .unwrap(),
        ));
        answers.push(answer_text(&solver.check_sat(limits).unwrap()));
    }
    assert_eq!(answers, ["sat", "unsat", "sat", "unsat", "sat"]);

    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("(reset)"), "the restart is in the log:\n{log}");
    assert!(log.contains("(set-option :timeout 5000)"), "{log}");
    assert!(
        log.contains("; no answer, process stopped"),
        "the lost answer is noted:\n{log}"
    );

    let replay = Process::new(z3_path())
        .arg(&log_path)
        .output()
        .expect("run z3 on the log");
    let stdout = String::from_utf8_lossy(&replay.stdout);
    let mut framer = Framer::new();
    framer.push(&stdout);
    framer.push("\n");
    let mut replayed = Vec::new();
    while let Some(item) = framer.next_item() {
        if item != "success" {
            replayed.push(item);
        }
    }
    let replayed_answers: Vec<&str> = replayed
        .iter()
        .map(String::as_str)
        .filter(|a| matches!(*a, "sat" | "unsat" | "unknown"))
        .collect();
    assert_eq!(
        replayed_answers,
        answers,
        "replay of {}:\n{stdout}",
        log_path.display()
    );
    let value_answer = replayed
        .iter()
        .find(|a| a.starts_with("(("))
        .expect("get-value answer in replay");
    assert_eq!(
        values_from_sexpr(&parse_one(value_answer).unwrap(), 2).unwrap(),
        values
    );
    assert!(
        !stdout.contains("error"),
        "replay reported errors:\n{stdout}"
    );
    remove_scratch_file(&log_path);
}

#[test]
fn solvers_run_in_parallel_threads() {
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            std::thread::spawn(move || {
                let mut solver = Solver::new(config()).unwrap();
                let (x_decl, x) = int_const("x");
                solver.declare_fun(&x_decl).unwrap();
                solver
                    .assert(&Term::eq(
                        Term::modulo(x.clone(), Term::int(7)),
                        Term::int(worker),
                    ))
                    .unwrap();
                for k in 0..50i64 {
                    solver.push().unwrap();
                    solver.assert(&Term::eq(x.clone(), Term::int(k))).unwrap();
                    let expected = if k % 7 == worker {
                        SatResult::Sat
                    } else {
                        SatResult::Unsat
                    };
                    assert_eq!(
                        solver.check_sat(QueryLimits::default()).unwrap(),
                        expected,
                        "worker {worker}, k {k}"
                    );
                    solver.pop(1).unwrap();
                }
                solver.stats().queries
            })
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().expect("worker panicked"), 50);
    }
}

/// Not a benchmark, but pins down that the pipe protocol is not a bottleneck: thousands of
/// commands and hundreds of queries in well under the limit. Figures go to the test output
/// (`--nocapture`). (Z3's own cost of `push` grows with some problem shapes, e.g. long
/// chains of inequalities; independent facts keep this about our side.)
#[test]
fn many_small_commands_are_fast() {
    let mut solver = Solver::new(config()).unwrap();
    let started = Instant::now();
    let mut constants = Vec::new();
    for i in 0..2000 {
        let (decl, term) = int_const(&format!("c{i}"));
        solver.declare_fun(&decl).unwrap();
        solver
            .assert(&Term::ge(term.clone(), Term::int(i)))
            .unwrap();
        constants.push(term);
    }
    let asserted = started.elapsed();
    let started = Instant::now();
    for (i, c) in constants.iter().enumerate().take(500) {
        solver.push().unwrap();
        solver
            .assert(&Term::lt(c.clone(), Term::int(i as i64)))
            .unwrap();
        assert!(solver
            .check_sat(QueryLimits::timeout(Duration::from_secs(10)))
            .unwrap()
            .is_unsat());
        solver.pop(1).unwrap();
    }
    let queried = started.elapsed();
    println!(
        "4000 declarations/assertions: {asserted:?}; 500 push/assert/check-sat/pop: {queried:?}; \
         stats {:?}",
        solver.stats()
    );
    assert!(asserted + queried < Duration::from_secs(60));
}
