//! Queries against a real Z3: answers, scopes, models, names, quantifiers.

mod common;

use common::{bool_const, config, int_const, real_const};
use germanium_smt::{
    FunDecl, IntLit, NameGenerator, Quantifier, QuantifierKind, QueryLimits, RealLit, SatResult,
    Solver, SolverConfig, SolverError, Sort, Symbol, Term, Value,
};

fn no_limits() -> QueryLimits {
    QueryLimits::default()
}

#[test]
fn sat_and_unsat() {
    let mut solver = Solver::new(config()).unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    solver.assert(&Term::gt(x.clone(), Term::int(0))).unwrap();
    assert_eq!(solver.check_sat(no_limits()).unwrap(), SatResult::Sat);
    solver.assert(&Term::lt(x.clone(), Term::int(0))).unwrap();
    assert_eq!(solver.check_sat(no_limits()).unwrap(), SatResult::Unsat);
}

#[test]
fn push_and_pop_track_the_scope_depth() {
    let mut solver = Solver::new(config()).unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    solver.assert(&Term::gt(x.clone(), Term::int(0))).unwrap();
    assert_eq!(solver.scope_depth(), 0);
    solver.push().unwrap();
    solver.push().unwrap();
    assert_eq!(solver.scope_depth(), 2);
    solver.assert(&Term::lt(x.clone(), Term::int(0))).unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_unsat());
    solver.pop(2).unwrap();
    assert_eq!(solver.scope_depth(), 0);
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());

    // Popping below zero is refused without disturbing the solver.
    let err = solver.pop(1).unwrap_err();
    assert!(matches!(err, SolverError::Usage(_)), "{err}");
    assert!(solver.is_running());
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
}

#[test]
fn declarations_survive_pop() {
    // `:global-declarations`: a symbol declared in a branch can be used after it.
    let mut solver = Solver::new(config()).unwrap();
    solver.push().unwrap();
    let (y_decl, y) = int_const("y");
    solver.declare_fun(&y_decl).unwrap();
    solver.pop(1).unwrap();
    solver.assert(&Term::eq(y, Term::int(7))).unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
}

#[test]
fn check_sat_assuming_does_not_keep_the_assumption() {
    let mut solver = Solver::new(config()).unwrap();
    let (p_decl, p) = bool_const("p");
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&p_decl).unwrap();
    solver.declare_fun(&x_decl).unwrap();
    solver
        .assert(&Term::implies(p.clone(), Term::lt(x.clone(), Term::int(0))))
        .unwrap();
    solver.assert(&Term::gt(x.clone(), Term::int(0))).unwrap();
    assert!(solver
        .check_sat_assuming(std::slice::from_ref(&p), no_limits())
        .unwrap()
        .is_unsat());
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
}

#[test]
fn models_and_values() {
    let mut solver = Solver::new(config()).unwrap();
    let (x_decl, x) = int_const("x");
    let (r_decl, r) = real_const("r");
    let (p_decl, p) = bool_const("p");
    let reference = Symbol::user("Ref");
    solver.declare_sort(&reference).unwrap();
    let a_decl = FunDecl::constant(Symbol::user("a"), Sort::Uninterpreted(reference.clone()));
    let b_decl = FunDecl::constant(Symbol::user("b"), Sort::Uninterpreted(reference.clone()));
    let f_decl = FunDecl::new(Symbol::user("f"), vec![Sort::Int], Sort::Int);
    for decl in [&x_decl, &r_decl, &p_decl, &a_decl, &b_decl, &f_decl] {
        solver.declare_fun(decl).unwrap();
    }
    let big = Term::int_from_text("-123456789012345678901234567890123456789012345").unwrap();
    solver.assert(&Term::eq(x.clone(), big.clone())).unwrap();
    solver
        .assert(&Term::eq(r.clone(), Term::real(-7, 3)))
        .unwrap();
    solver.assert(&Term::not(p.clone())).unwrap();
    solver
        .assert(&Term::distinct(vec![
            Term::constant(&a_decl),
            Term::constant(&b_decl),
        ]))
        .unwrap();
    solver
        .assert(&Term::eq(
            Term::app(&f_decl, vec![Term::int(1)]),
            Term::int(5),
        ))
        .unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());

    let model = solver.get_model().unwrap();
    assert_eq!(
        model.value(x_decl.name()),
        Some(Value::Int(big.as_int().unwrap().clone()))
    );
    assert_eq!(
        model.value(r_decl.name()),
        Some(Value::Real(
            RealLit::new(IntLit::Small(-7), IntLit::Small(3)).unwrap()
        ))
    );
    assert_eq!(model.value(p_decl.name()), Some(Value::Bool(false)));
    assert!(matches!(
        model.value(a_decl.name()),
        Some(Value::Element(_))
    ));
    assert_ne!(model.value(a_decl.name()), model.value(b_decl.name()));
    assert_eq!(model.elements.len(), 2, "the universe of Ref is reported");

    let values = solver
        .get_value(&[
            Term::app(&f_decl, vec![Term::int(1)]),
            Term::add(vec![r.clone(), Term::real(1, 3)]),
        ])
        .unwrap();
    assert_eq!(values[0], Value::Int(IntLit::Small(5)));
    assert_eq!(values[1], Value::Real(RealLit::integer(IntLit::Small(-2))));
}

#[test]
fn asking_for_a_model_after_unsat_is_a_rejection_not_a_crash() {
    let mut solver = Solver::new(config()).unwrap();
    solver.assert(&Term::ff()).unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_unsat());
    let err = solver.get_model().unwrap_err();
    assert!(matches!(err, SolverError::Rejected { .. }), "{err}");
    assert!(solver.is_running());
    assert!(solver.check_sat(no_limits()).unwrap().is_unsat());
}

#[test]
fn odd_and_builtin_names_reach_z3_and_come_back() {
    let mut solver = Solver::new(config()).unwrap();
    let mut fresh = NameGenerator::new();
    let names = [
        "abs",
        "select",
        "Seq[Int]",
        "a b",
        "x@1",
        "it's",
        "ünïcode",
        "bvadd",
        "",
        "int",
    ];
    let mut decls = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let decl = FunDecl::constant(Symbol::user(name), Sort::Int);
        solver.declare_fun(&decl).unwrap();
        solver
            .assert(&Term::eq(Term::constant(&decl), Term::int(i as i64)))
            .unwrap();
        decls.push(decl);
        // A fresh name with the same base never clashes with the user name.
        let twin = FunDecl::constant(fresh.fresh(name), Sort::Int);
        solver.declare_fun(&twin).unwrap();
        solver
            .assert(&Term::eq(Term::constant(&twin), Term::int(100 + i as i64)))
            .unwrap();
    }
    // The built-in `abs` still means absolute value.
    let abs_of = Term::abs(Term::int(-3));
    assert_eq!(abs_of.to_string(), "3", "folded");
    let (y_decl, y) = int_const("y");
    solver.declare_fun(&y_decl).unwrap();
    let builtin_abs = Term::builtin("abs", vec![y.clone()], Sort::Int);
    solver.assert(&Term::eq(builtin_abs, Term::int(4))).unwrap();
    solver.assert(&Term::lt(y, Term::int(0))).unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
    let model = solver.get_model().unwrap();
    for (i, decl) in decls.iter().enumerate() {
        assert_eq!(
            model.value(decl.name()),
            Some(Value::Int(IntLit::Small(i as i128))),
            "{:?}",
            names[i]
        );
        assert_eq!(decl.name().user_name().as_deref(), Some(names[i]));
    }
    assert_eq!(
        model.value(y_decl.name()),
        Some(Value::Int(IntLit::Small(-4)))
    );
}

#[test]
fn quantifiers_with_patterns_are_instantiated() {
    let mut solver = Solver::new(config()).unwrap();
    let f = FunDecl::new(Symbol::user("f"), vec![Sort::Int], Sort::Int);
    solver.declare_fun(&f).unwrap();
    let i = Symbol::user("i");
    let vi = Term::var(i.clone(), Sort::Int);
    let fi = Term::app(&f, vec![vi.clone()]);
    let axiom = Term::quantifier(Quantifier {
        kind: QuantifierKind::Forall,
        vars: vec![(i, Sort::Int)],
        body: Term::gt(fi.clone(), vi),
        triggers: vec![vec![fi]],
        qid: Some(Symbol::user("f_grows")),
        weight: None,
    });
    solver.assert(&axiom).unwrap();
    solver.push().unwrap();
    solver
        .assert(&Term::lt(Term::app(&f, vec![Term::int(3)]), Term::int(2)))
        .unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_unsat());
    solver.pop(1).unwrap();
    // Without a matching term nothing forces a contradiction.
    assert!(!solver.check_sat(no_limits()).unwrap().is_unsat());
}

#[test]
fn let_and_define_fun() {
    let mut solver = Solver::new(config()).unwrap();
    let x = Symbol::user("x");
    let inc = Symbol::user("inc");
    solver
        .define_fun(
            &inc,
            vec![(x.clone(), Sort::Int)],
            Sort::Int,
            Term::add(vec![Term::var(x.clone(), Sort::Int), Term::int(1)]),
        )
        .unwrap();
    let inc_decl = FunDecl::new(inc, vec![Sort::Int], Sort::Int);
    let t = Symbol::user("t");
    let body = Term::eq(
        Term::app(&inc_decl, vec![Term::var(t.clone(), Sort::Int)]),
        Term::int(6),
    );
    let (n_decl, n) = int_const("n");
    solver.declare_fun(&n_decl).unwrap();
    solver
        .assert(&Term::let_in(vec![(t, n.clone())], body))
        .unwrap();
    solver
        .assert(&Term::distinct(vec![n, Term::int(5)]))
        .unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_unsat());
}

#[test]
fn unsat_cores_name_the_culprits() {
    let mut solver = Solver::new(SolverConfig {
        unsat_cores: true,
        ..config()
    })
    .unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    let positive = Symbol::user("positive");
    let negative = Symbol::user("negative x");
    solver
        .assert_named(&Term::gt(x.clone(), Term::int(0)), &positive)
        .unwrap();
    solver
        .assert_named(&Term::lt(x.clone(), Term::int(0)), &negative)
        .unwrap();
    solver
        .assert_named(&Term::lt(x.clone(), Term::int(100)), &Symbol::user("small"))
        .unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_unsat());
    let mut core = solver.get_unsat_core().unwrap();
    core.sort();
    let mut expected = vec![negative, positive];
    expected.sort();
    assert_eq!(core, expected);
}

#[test]
fn backend_types_pass_through_as_raw_sorts() {
    let mut solver = Solver::new(config()).unwrap();
    let bv8 = Sort::bit_vec(8);
    let a = FunDecl::constant(Symbol::user("a"), bv8.clone());
    solver.declare_fun(&a).unwrap();
    let a = Term::constant(&a);
    let sum = Term::builtin(
        "bvadd",
        vec![a.clone(), Term::builtin("(_ bv1 8)", vec![], bv8.clone())],
        bv8.clone(),
    );
    solver
        .assert(&Term::eq(sum, Term::builtin("(_ bv0 8)", vec![], bv8)))
        .unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
    let values = solver.get_value(&[a]).unwrap();
    assert_eq!(
        values[0].clone(),
        Value::Other(germanium_smt::sexpr::parse_one("(_ bv255 8)").unwrap())
    );
}

#[test]
fn reset_forgets_everything_but_keeps_working() {
    let mut solver = Solver::new(config()).unwrap();
    let (x_decl, x) = int_const("x");
    solver.declare_fun(&x_decl).unwrap();
    solver.push().unwrap();
    solver.assert(&Term::ff()).unwrap();
    solver.reset().unwrap();
    assert_eq!(solver.scope_depth(), 0);
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
    // `x` is gone, so it can be declared again.
    solver.declare_fun(&x_decl).unwrap();
    solver.assert(&Term::eq(x, Term::int(1))).unwrap();
    assert!(solver.check_sat(no_limits()).unwrap().is_sat());
}

#[test]
fn the_version_is_reported_and_types_can_cross_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_and_sync::<Term>();
    send_and_sync::<Sort>();
    send::<Solver>();
    let mut solver = Solver::new(config()).unwrap();
    let version = solver.version().unwrap();
    assert!(version.starts_with("4."), "{version}");
}

/// An assertion whose term holds big equal subterms is printed with `let` bindings (see
/// `sharing`): Z3 must read it as the same formula. `c(k+1) = c(k) - min(c(k), q)`, from
/// `p = 10` and `q = 3`, is 0 after four links and stays 0.
#[test]
fn assertions_printed_with_shared_subterms_mean_the_same() {
    let mut solver = Solver::new(config()).unwrap();
    let (p_decl, p) = int_const("p");
    let (q_decl, q) = int_const("q");
    solver.declare_fun(&p_decl).unwrap();
    solver.declare_fun(&q_decl).unwrap();
    solver.assert(&Term::eq(p.clone(), Term::int(10))).unwrap();
    solver.assert(&Term::eq(q.clone(), Term::int(3))).unwrap();
    let mut c = p;
    let mut amounts = Vec::new();
    for _ in 0..30 {
        c = Term::sub(
            c.clone(),
            Term::ite(Term::le(c.clone(), q.clone()), c, q.clone()),
        );
        amounts.push(c.clone());
    }
    for (links, expected) in [(3, 1), (4, 0), (30, 0)] {
        let amount = amounts[links - 1].clone();
        solver.push().unwrap();
        solver
            .assert(&Term::not(Term::eq(amount.clone(), Term::int(expected))))
            .unwrap();
        assert_eq!(solver.check_sat(no_limits()).unwrap(), SatResult::Unsat);
        solver.pop(1).unwrap();
        solver.push().unwrap();
        solver
            .assert(&Term::eq(amount, Term::int(expected)))
            .unwrap();
        assert_eq!(solver.check_sat(no_limits()).unwrap(), SatResult::Sat);
        solver.pop(1).unwrap();
    }
}
