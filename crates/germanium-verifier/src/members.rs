//! The members of a program that are verified, and the solver sessions they are verified in.

use std::path::{Path, PathBuf};

use germanium_syntax::ast::{Function, Item, ItemKind, Method, Predicate, Program};
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
    program.items.iter().filter_map(member_of).collect()
}

/// The member `item` declares, if it has something to verify.
fn member_of(item: &Item) -> Option<Member<'_>> {
    match &item.kind {
        ItemKind::Method(m) => Some(Member::Method(m)),
        ItemKind::Function(f) => {
            let has_obligations = f.body.is_some()
                || !f.contract.requires.is_empty()
                || !f.contract.ensures.is_empty()
                || !f.contract.decreases.is_empty();
            has_obligations.then_some(Member::Function(f))
        }
        ItemKind::Predicate(p) if p.body.is_some() => Some(Member::Predicate(p)),
        _ => None,
    }
}

/// How much text a session's members and its preamble are made of: a rough, deterministic
/// measure of their cost (see [`sessions`]).
#[derive(Clone, Debug, Default)]
pub struct SessionSizes {
    /// The text length of each member of [`members`], in the same order.
    pub members: Vec<usize>,
    /// The text length of what every session's preamble axiomatises: domains, ADTs and
    /// functions.
    pub preamble: usize,
}

impl SessionSizes {
    pub fn of(program: &Program) -> SessionSizes {
        let length = |item: &Item| (item.span.end.saturating_sub(item.span.start)) as usize;
        let members = program
            .items
            .iter()
            .filter(|item| member_of(item).is_some())
            .map(length)
            .collect();
        let preamble = program
            .items
            .iter()
            .filter(|item| {
                matches!(
                    item.kind,
                    ItemKind::Domain(_) | ItemKind::Adt(_) | ItemKind::Function(_)
                )
            })
            .map(length)
            .sum();
        SessionSizes { members, preamble }
    }
}

/// Members per solver session, at least (see [`sessions`]).
pub const MIN_SESSION_MEMBERS: usize = 4;

/// Sessions a phase is split into whatever its members' size (when it has enough members).
pub const BASE_SESSIONS: usize = 2;

/// Member text, in preamble lengths, that earns a session beyond [`BASE_SESSIONS`].
pub const PREAMBLES_PER_SESSION: usize = 4;

/// Splits `which` (indices into [`members`]) into solver sessions: runs of consecutive
/// members, at least [`MIN_SESSION_MEMBERS`] long (but for the last). Each session starts
/// from the solver state right after the preamble and verifies its members in order, so
/// what the solver has seen before a member depends only on the program: the verdicts do
/// not depend on `--jobs`, on which worker takes which session, or on timing. (Z3's answers
/// depend on its history even across `pop`; starting every member afresh would cost a
/// reset per member.)
///
/// A session starts with a `(reset)`, the whole preamble again and, as members use them,
/// the function definitions again; on front-end output the preamble is most of the program
/// and a session per four members cost more than it saved (Nagini's programs: 18.0 s in
/// all, median 0.24 s, against 14.6 s and 0.18 s with this rule, `-j 2`). So there are
/// [`BASE_SESSIONS`] sessions (two cores share a phase), and one more per
/// [`PREAMBLES_PER_SESSION`] preambles' length of member text, never more than the member
/// count allows.
pub fn sessions<'w>(which: &'w [usize], sizes: &SessionSizes) -> Vec<&'w [usize]> {
    let by_count = (which.len() / MIN_SESSION_MEMBERS).max(1);
    let text: usize = which
        .iter()
        .map(|i| sizes.members.get(*i).copied().unwrap_or(0))
        .sum();
    let by_text = BASE_SESSIONS + text / (PREAMBLES_PER_SESSION * sizes.preamble).max(1);
    let count = by_count.min(by_text);
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
    use super::{
        sessions, SessionSizes, BASE_SESSIONS, MIN_SESSION_MEMBERS, PREAMBLES_PER_SESSION,
    };

    fn sizes(members: usize, each: usize, preamble: usize) -> SessionSizes {
        SessionSizes {
            members: vec![each; members],
            preamble,
        }
    }

    #[test]
    fn sessions_are_runs_of_consecutive_members_fixed_by_the_program() {
        for n in 0..40 {
            let which: Vec<usize> = (0..n).map(|i| i * 3).collect();
            // A small preamble: the member count decides.
            let split = sessions(&which, &sizes(3 * n, 100, 1));
            // Together they are the members, in order.
            assert_eq!(split.concat(), which);
            if n >= MIN_SESSION_MEMBERS {
                let (last, rest) = split.split_last().unwrap();
                assert!(
                    rest.iter().all(|s| s.len() >= MIN_SESSION_MEMBERS),
                    "{n}: {split:?}"
                );
                assert!(!last.is_empty());
                assert!(split.len() <= n / MIN_SESSION_MEMBERS, "{n}: {split:?}");
                assert!(
                    split.len() > 1 || n < 2 * MIN_SESSION_MEMBERS,
                    "{n}: {split:?}"
                );
            } else {
                assert!(split.len() <= 1, "{n}: {split:?}");
            }
        }
    }

    #[test]
    fn a_large_preamble_makes_fewer_larger_sessions() {
        let which: Vec<usize> = (0..40).collect();
        // Members' text a tenth of the preamble's: the base count.
        let split = sessions(&which, &sizes(40, 100, 40_000));
        assert_eq!(split.len(), BASE_SESSIONS);
        assert_eq!(split.concat(), which);
        // Three times PREAMBLES_PER_SESSION preambles' worth of member text (40 × 300):
        // three sessions more.
        let preamble = 12_000 / (3 * PREAMBLES_PER_SESSION);
        let split = sessions(&which, &sizes(40, 300, preamble));
        assert_eq!(split.len(), BASE_SESSIONS + 3);
        // Members of no known size (no program): the base count.
        let split = sessions(&which, &SessionSizes::default());
        assert_eq!(split.len(), BASE_SESSIONS);
    }
}
