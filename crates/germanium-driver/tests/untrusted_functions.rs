//! `Options::failed_functions`: functions whose postconditions are not to be trusted. A remote
//! action's slice leaves functions without bodies and names them there, so that an abstract
//! function of the slice is trusted exactly where its original would be. Applications assume
//! a function's postcondition either way (each function is verified on its own); what the
//! list takes away is the postcondition as an axiom, which terms that no application made
//! need, such as those a function's definition brings in.

use std::path::Path;
use std::sync::Arc;

use germanium_driver::{run_text, Backend, MemberFilter, Mode, Options, Outcome};

const PROGRAM: &str = "\
function f(x: Int): Int
  ensures result > x

function g(x: Int): Int
{ f(x) + 1 }

method t(x: Int) {
  assert g(x) > x + 1
}

function k(x: Int): Int
  ensures result > x + 1
{ g(x) }
";

/// The result and errors (id, line) of verifying `member` alone with `untrusted`.
fn verify(
    backend: Backend,
    member: &'static str,
    untrusted: &[&str],
) -> (Outcome, Vec<(String, u32)>) {
    let mut options = Options::new(Mode::Verify);
    options.backend = backend;
    options.failed_functions = Some(untrusted.iter().map(|s| s.to_string()).collect());
    options.members = Some(MemberFilter(Arc::new(move |name: &str| name == member)));
    let report = run_text(Path::new("untrusted.vpr"), PROGRAM.to_string(), &options);
    let found = report
        .diagnostics
        .iter()
        .map(|d| (d.id.clone(), report.sources.start(d.span).line))
        .collect();
    (report.result, found)
}

#[test]
fn an_abstract_function_named_as_failed_is_no_axiom_after_the_function_phase() {
    for backend in [Backend::Symbex, Backend::Vcg] {
        assert_eq!(
            verify(backend, "t", &[]),
            (Outcome::Verified, vec![]),
            "{backend:?}"
        );
        assert_eq!(
            verify(backend, "t", &["f"]),
            (
                Outcome::Failed,
                vec![("assert.failed:assertion.false".to_string(), 8)]
            ),
            "{backend:?}"
        );
    }
}

#[test]
fn an_abstract_function_named_as_failed_is_no_axiom_in_the_function_phase() {
    // The verification-condition back end trusts no postcondition while functions are
    // verified; the symbolic engine trusts abstract ones, unless named.
    assert_eq!(
        verify(Backend::Symbex, "k", &[]),
        (Outcome::Verified, vec![])
    );
    assert_eq!(
        verify(Backend::Symbex, "k", &["f"]),
        (
            Outcome::Failed,
            vec![("postcondition.violated:assertion.false".to_string(), 12)]
        )
    );
}
