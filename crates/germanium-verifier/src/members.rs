//! The members of a program that are verified, and the solver sessions they are verified in.

use std::path::{Path, PathBuf};

use germanium_syntax::ast::{Function, ItemKind, Method, Predicate, Program};
use germanium_syntax::Span;

/// A member with something to verify.
#[derive(Clone, Copy, Debug)]
pub enum Member<'a> {
    Method(&'a Method),
    Function(&'a Function),
    Predicate(&'a Predicate),
}

impl Member<'_> {
    pub fn name_and_kind(&self) -> (&str, &'static str) {
        match self {
            Member::Method(m) => (&m.name.name, "method"),
            Member::Function(f) => (&f.name.name, "function"),
            Member::Predicate(p) => (&p.name.name, "predicate"),
        }
    }

    /// Where the member's errors of its own (not of a construct) are reported: its name.
    pub fn span(&self) -> Span {
        match self {
            Member::Method(m) => m.name.span,
            Member::Function(f) => f.name.span,
            Member::Predicate(p) => p.name.span,
        }
    }
}

/// The members of a program that have something to verify, in program order: methods,
/// functions with a body or a contract, predicates with a body.
pub fn members(program: &Program) -> Vec<Member<'_>> {
    let mut out = Vec::new();
    for item in &program.items {
        match &item.kind {
            ItemKind::Method(m) => {
                out.push(Member::Method(m));
            }
            ItemKind::Function(f) => {
                let has_obligations = f.body.is_some()
                    || !f.contract.requires.is_empty()
                    || !f.contract.ensures.is_empty()
                    || !f.contract.decreases.is_empty();
                if has_obligations {
                    out.push(Member::Function(f));
                }
            }
            ItemKind::Predicate(p) if p.body.is_some() => {
                out.push(Member::Predicate(p));
            }
            _ => {}
        }
    }
    out
}

/// Members per solver session, at least (see [`sessions`]).
pub const MIN_SESSION_MEMBERS: usize = 4;

/// Splits `which` into solver sessions: runs of consecutive members, at least
/// [`MIN_SESSION_MEMBERS`] long (but for the last). Each session starts from the solver state
/// right after the preamble and verifies its members in order, so what the solver has seen
/// before a member depends only on the program: the verdicts do not depend on `--jobs`, on
/// which worker takes which session, or on timing. (Z3's answers depend on its history
/// even across `pop`; starting every member afresh would cost a reset per member.)
pub fn sessions(which: &[usize]) -> Vec<&[usize]> {
    let count = (which.len() / MIN_SESSION_MEMBERS).max(1);
    let size = which.len().div_ceil(count).max(1);
    which.chunks(size).collect()
}

/// The SMT log of one worker: the file itself for one worker and no phase, else
/// `<stem>[.<phase>].w<worker>.smt2` beside it.
pub fn log_path(base: &Path, worker: usize, workers: usize, phase: Option<&str>) -> PathBuf {
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "smt".into());
    match (phase, workers) {
        (None, 0 | 1) => base.to_path_buf(),
        (None, _) => base.with_file_name(format!("{stem}.w{worker}.smt2")),
        (Some(p), _) => base.with_file_name(format!("{stem}.{p}.w{worker}.smt2")),
    }
}

#[cfg(test)]
mod tests {
    use super::{sessions, MIN_SESSION_MEMBERS};

    #[test]
    fn sessions_are_runs_of_consecutive_members_fixed_by_the_program() {
        for n in 0..40 {
            let which: Vec<usize> = (0..n).map(|i| i * 3).collect();
            let split = sessions(&which);
            // Together they are the members, in order.
            assert_eq!(split.concat(), which);
            if n >= MIN_SESSION_MEMBERS {
                let (last, rest) = split.split_last().unwrap();
                assert!(
                    rest.iter().all(|s| s.len() >= MIN_SESSION_MEMBERS),
                    "{n}: {split:?}"
                );
                assert!(!last.is_empty());
            } else {
                assert!(split.len() <= 1, "{n}: {split:?}");
            }
        }
    }
}
