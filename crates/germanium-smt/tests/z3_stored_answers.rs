//! Answers kept between runs ([`germanium_smt::AnswerStore`]) against a real Z3: a second
//! session asking the same queries (with other fresh names) is answered from the store, a
//! changed query is asked, and a model is still read from Z3 itself.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::config;
use germanium_smt::{
    AnswerStore, FunDecl, NameGenerator, QueryKey, QueryLimits, SatResult, Solver, SolverConfig,
    Sort, Symbol, Term, Value,
};

/// A store in memory: what one run records, the next finds (as the cache's table does).
#[derive(Debug, Default)]
struct MemoryStore {
    kept: Mutex<HashMap<QueryKey, SatResult>>,
    recorded: Mutex<Vec<(QueryKey, SatResult)>>,
}

impl MemoryStore {
    fn end_of_run(&self) {
        let recorded = std::mem::take(&mut *self.recorded.lock().unwrap());
        self.kept.lock().unwrap().extend(recorded);
    }
}

impl AnswerStore for MemoryStore {
    fn answer(&self, key: &QueryKey) -> Option<SatResult> {
        self.kept.lock().unwrap().get(key).cloned()
    }

    fn record(&self, key: QueryKey, answer: &SatResult) {
        self.recorded.lock().unwrap().push((key, answer.clone()));
    }
}

fn limits() -> QueryLimits {
    QueryLimits {
        rlimit: Some(1_000_000),
        ..QueryLimits::default()
    }
}

/// A session: a preamble (`f` with `f(x) > x`), a checkpoint, `skip` fresh names used up
/// (as members before this one would), then `x` fresh with `f(x) < bound` and two queries:
/// whether `x > bound` is refuted and whether `x == 0` is possible. Gives both answers, the
/// solver and `x`.
fn session(
    store: &Arc<MemoryStore>,
    skip: usize,
    bound: i64,
) -> (SatResult, SatResult, Solver, Term) {
    let mut solver = Solver::new(SolverConfig {
        answers: Some(store.clone()),
        ..config()
    })
    .unwrap();
    let f = FunDecl::new(Symbol::user("f"), vec![Sort::Int], Sort::Int);
    solver.declare_fun(&f).unwrap();
    let v = Symbol::user("v");
    let vv = Term::var(v.clone(), Sort::Int);
    let fv = Term::app(&f, vec![vv.clone()]);
    solver
        .assert(&Term::forall(
            vec![(v, Sort::Int)],
            Term::gt(fv.clone(), vv),
            vec![vec![fv]],
        ))
        .unwrap();
    solver.checkpoint().unwrap();
    let mut names = NameGenerator::new();
    for _ in 0..skip {
        names.fresh("y");
    }
    let x = FunDecl::constant(names.fresh("x"), Sort::Int);
    solver.declare_fun(&x).unwrap();
    let x = Term::constant(&x);
    solver.push().unwrap();
    solver
        .assert(&Term::lt(Term::app(&f, vec![x.clone()]), Term::int(bound)))
        .unwrap();
    solver.push().unwrap();
    solver
        .assert(&Term::gt(x.clone(), Term::int(bound)))
        .unwrap();
    let refuted = solver.check_sat(limits()).unwrap();
    solver.pop(1).unwrap();
    solver.push().unwrap();
    solver.assert(&Term::eq(x.clone(), Term::int(0))).unwrap();
    let possible = solver.check_sat(limits()).unwrap();
    (refuted, possible, solver, x)
}

#[test]
fn a_second_run_takes_stored_answers_whatever_its_fresh_names() {
    let store = Arc::new(MemoryStore::default());
    let (refuted, possible, solver, _) = session(&store, 0, 5);
    // `possible` is `unknown` (incomplete quantifiers, with MBQI off) or `sat`.
    assert!(refuted.is_unsat() && !possible.is_unsat());
    let first = (refuted, possible);
    assert_eq!(solver.stats().stored_answers, 0);
    assert_eq!(solver.stats().queries, 2);
    drop(solver);
    store.end_of_run();

    // Same queries, other names: both from the store, none asked.
    let (refuted, possible, mut solver, x) = session(&store, 7, 5);
    assert_eq!((refuted, possible), first);
    assert_eq!(solver.stats().stored_answers, 2);
    assert_eq!(solver.stats().queries, 0);
    // The model of a stored answer is Z3's own: the query is asked for it.
    let values = solver.get_value(&[x]).unwrap();
    assert_eq!(solver.stats().queries, 1);
    assert!(
        matches!(values.as_slice(), [Value::Int(n)] if n.to_string() == "0"),
        "{values:?}"
    );
}

#[test]
fn a_changed_assertion_is_asked_again() {
    let store = Arc::new(MemoryStore::default());
    let (_, _, solver, _) = session(&store, 0, 5);
    drop(solver);
    store.end_of_run();
    // `f(x) < 1` instead of `< 5`: both keys differ, and x == 0 is now impossible.
    let (refuted, possible, solver, _) = session(&store, 0, 1);
    assert_eq!(solver.stats().stored_answers, 0);
    assert_eq!((refuted, possible), (SatResult::Unsat, SatResult::Unsat));
}
