//! Consumption from a stack of heaps, on a real solver: what the first heap holds goes
//! first, the rest comes from the next; missing permission is reported.

use std::collections::HashSet;

use germanium_smt::{SolverConfig, Term};
use germanium_syntax::ast::{ItemKind, StmtKind};
use germanium_syntax::SourceMap;

use super::start_worker;
use crate::decider::Budget;
use crate::env::Env;
use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::Abort;
use crate::state::{Chunk, Heap, Permission, Resource};

const PROGRAM: &str = "field f: Int\nmethod m(x: Ref) { assert x.f == 0 }\n";

fn with_verifier(
    test: impl FnOnce(&mut crate::rules::context::Verifier<'_, '_>, &germanium_syntax::ast::Expr),
) {
    let (program, sem) = germanium_theories::testing::checked(PROGRAM);
    let mut sources = SourceMap::new();
    sources.add("test.vpr".into(), PROGRAM.to_string());
    let env = Env::new(&program, &sem, &sources);
    let budget = Budget::from_timeout(std::time::Duration::from_secs(5));
    let trust = super::FunctionTrust {
        axioms: HashSet::new(),
        untrusted: HashSet::new(),
    };
    let mut v =
        start_worker(&env, SolverConfig::default(), budget, &trust).expect("a solver starts");
    let at = program
        .items
        .iter()
        .find_map(|item| match &item.kind {
            ItemKind::Method(m) => m.body.as_ref().and_then(|b| match &b.stmts[0].kind {
                StmtKind::Assert(e) => Some(e.clone()),
                _ => None,
            }),
            _ => None,
        })
        .expect("the assertion");
    v.decider.begin_member().unwrap();
    test(&mut v, &at);
}

fn field() -> Resource {
    Resource::Field("f".into())
}

/// Whether the solver proves `perm(x.f) == amount` in `heap`.
fn holds(
    v: &mut crate::rules::context::Verifier<'_, '_>,
    heap: &Heap,
    x: &Term,
    amount: Permission,
) -> bool {
    let held = resources::perm_of(heap, &field(), std::slice::from_ref(x));
    v.prove(Term::eq(held.0, amount.0), Default::default())
        .unwrap()
}

/// A fresh object `x`, an exhale's error context, and two heaps holding `first` and
/// `second` of `x.f` (whose value is 1).
fn stack_of_two(
    v: &mut crate::rules::context::Verifier<'_, '_>,
    at: &germanium_syntax::ast::Expr,
    first: Permission,
    second: Permission,
) -> (Term, ErrorContext, Heap, Heap) {
    let x: Term = v.fresh("x", v.env.ref_sort.clone(), at.span).unwrap();
    let ctx = ErrorContext::at("exhale.failed", at.span, "Exhale might fail.");
    let heap = |amount| {
        let mut heap = Heap::new();
        heap.push(Chunk::field("f", x.clone(), Term::int(1), amount));
        heap
    };
    (x.clone(), ctx, heap(first), heap(second))
}

#[test]
fn a_stack_gives_what_its_first_heap_holds_first() {
    with_verifier(|v, at| {
        let half = Permission::fraction(1, 2);
        let (x, ctx, mut first, mut second) =
            stack_of_two(v, at, half.clone(), Permission::write());
        let snap = v
            .consume_from(
                &mut [&mut first, &mut second],
                &field(),
                std::slice::from_ref(&x),
                Some(half.clone()),
                at,
                &ctx,
            )
            .unwrap();
        assert!(holds(v, &first, &x, Permission::none()));
        assert!(holds(v, &second, &x, Permission::write()));
        assert!(v.prove(Term::eq(snap, Term::int(1)), at.span).unwrap());
        // What the first heap lacks comes from the second.
        first.push(Chunk::field(
            "f",
            x.clone(),
            Term::int(1),
            Permission::fraction(1, 4),
        ));
        v.consume_from(
            &mut [&mut first, &mut second],
            &field(),
            std::slice::from_ref(&x),
            Some(half.clone()),
            at,
            &ctx,
        )
        .unwrap();
        assert!(holds(v, &first, &x, Permission::none()));
        assert!(holds(v, &second, &x, Permission::fraction(3, 4)));
        // A wildcard takes some of the first heap that holds any.
        v.consume_from(
            &mut [&mut first, &mut second],
            &field(),
            std::slice::from_ref(&x),
            None,
            at,
            &ctx,
        )
        .unwrap();
        let left = resources::perm_of(&second, &field(), std::slice::from_ref(&x));
        assert!(v
            .prove(
                Term::lt(left.0.clone(), Permission::fraction(3, 4).0),
                at.span
            )
            .unwrap());
        assert!(v.prove(left.is_positive(), at.span).unwrap());
        assert!(v.errors.is_empty(), "{:?}", v.errors);
    });
}

#[test]
fn a_stack_that_holds_too_little_is_reported() {
    with_verifier(|v, at| {
        let quarter = Permission::fraction(1, 4);
        let (x, ctx, mut first, mut second) = stack_of_two(v, at, quarter.clone(), quarter);
        let r = v.consume_from(
            &mut [&mut first, &mut second],
            &field(),
            &[x],
            Some(Permission::write()),
            at,
            &ctx,
        );
        assert_eq!(r, Err(Abort::Failed));
        assert_eq!(v.errors.len(), 1);
        assert!(
            v.errors[0].id.ends_with("insufficient.permission"),
            "{:?}",
            v.errors
        );
    });
}

#[test]
fn a_failed_proof_shows_the_model_of_its_own_query() {
    use crate::decider::Refutation;
    use germanium_smt::Value;
    with_verifier(|v, at| {
        let x: Term = v.fresh("x", germanium_smt::Sort::Int, at.span).unwrap();
        v.assume(Term::gt(x.clone(), Term::int(0)), at.span)
            .unwrap();
        // x > 5 does not follow: the model is read before the query's scope is popped.
        let claim = Term::gt(x.clone(), Term::int(5));
        match v
            .decider
            .refutes_or_explains(&Term::not(claim), std::slice::from_ref(&x))
        {
            Ok(Refutation::NotProved { answer, values }) => {
                // The preamble's quantifiers make Z3 answer `unknown` rather than `sat`
                // (no model-based instantiation), with a model all the same.
                assert!(!answer.is_unsat(), "{answer:?}");
                let values = values.expect("a model");
                let Value::Int(n) = &values[0] else {
                    panic!("{values:?}")
                };
                let n = n.as_i128().unwrap();
                assert!(0 < n && n <= 5, "{n}");
            }
            other => panic!("{other:?}"),
        }
        let holds = Term::gt(x.clone(), Term::int(-1));
        assert_eq!(
            v.decider
                .refutes_or_explains(&Term::not(holds), &[x])
                .unwrap(),
            Refutation::Proved
        );
    });
}
