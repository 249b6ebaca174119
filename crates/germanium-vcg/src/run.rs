//! The entry point: members, sessions and workers as the neutral layer describes them.

use germanium_semantics::Semantics;
use germanium_syntax::ast::Program;
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, SourceMap};
use germanium_verifier::{members, MemberResult, ProgramResult, VerifyOptions};

/// Verifies every member of a well-typed program; returns the errors (empty: verified).
pub fn verify_program(
    program: &Program,
    sem: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
) -> Vec<Diagnostic> {
    verify_members(program, sem, sources, options).diagnostics()
}

/// Verifies the members `options.members` selects.
pub fn verify_members(
    program: &Program,
    _sem: &Semantics,
    _sources: &SourceMap,
    options: &VerifyOptions,
) -> ProgramResult {
    let mut out = ProgramResult {
        failed_functions: options.failed_functions.clone(),
        ..ProgramResult::default()
    };
    for member in members(program) {
        let (name, kind) = member.name_and_kind();
        if !options.members.as_ref().is_none_or(|keep| (keep.0)(name)) {
            continue;
        }
        out.members.push(MemberResult {
            name: name.to_string(),
            kind,
            errors: vec![Diagnostic::new(
                ids::UNSUPPORTED,
                member.span(),
                "the verification-condition back end does not verify this member yet",
            )],
        });
    }
    out
}
