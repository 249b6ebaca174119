//! The well-founded orders of termination measures (the `decreases/*.vpr` library's
//! `decreasing` and `bounded`), compared lexicographically: what both back ends check at a
//! recursive call.

use germanium_semantics::{Semantics, Type};
use germanium_smt::Term;

use crate::{Theories, TheoryOp, Unsupported};

/// `function(args)` of the library's order for `ty`.
fn order(
    theories: &Theories,
    sem: &Semantics,
    function: &str,
    ty: &Type,
    args: Vec<Term>,
) -> Result<Term, Unsupported> {
    let Some(domain) = sem.domain_functions.get(function).map(|f| f.domain.clone()) else {
        return Err(Unsupported(
            "termination measures without the `decreases` library".into(),
        ));
    };
    let op = TheoryOp::DomainFunction {
        domain,
        function: function.to_string(),
        type_args: vec![ty.clone()],
    };
    theories.apply(&op, args)
}

/// `smaller <_lex larger`. As in Viper, both tuples are extended by a top element: a prefix
/// of the larger tuple followed by more elements is smaller, a tuple is never smaller than
/// its own extension, and elements of different types do not compare.
pub fn lex_less(
    theories: &Theories,
    sem: &Semantics,
    smaller: &[(Term, Type)],
    larger: &[(Term, Type)],
) -> Result<Term, Unsupported> {
    let mut options = Vec::new();
    let mut equal_so_far = Vec::new();
    for i in 0..smaller.len().max(larger.len()) {
        let (Some((a, ta)), Some((b, tb))) = (smaller.get(i), larger.get(i)) else {
            if i < smaller.len() {
                options.push(Term::and(equal_so_far.iter().cloned()));
            }
            break;
        };
        if ta != tb {
            break;
        }
        let decreasing = order(theories, sem, "decreasing", ta, vec![a.clone(), b.clone()])?;
        let bounded = order(theories, sem, "bounded", tb, vec![b.clone()])?;
        options.push(Term::and(
            equal_so_far.iter().cloned().chain([decreasing, bounded]),
        ));
        equal_so_far.push(Term::eq(a.clone(), b.clone()));
    }
    Ok(Term::or(options))
}
