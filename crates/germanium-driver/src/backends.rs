//! The back ends behind one call: the driver, the cache and the output see only the
//! verifier-neutral layer's options and results (`germanium-verifier`).

use germanium_semantics::Semantics;
use germanium_syntax::ast::Program;
use germanium_syntax::SourceMap;
use germanium_verifier::{Backend, ProgramResult, VerifyOptions};

/// What chooses and equips the back end of a run, besides the neutral options.
#[derive(Clone, Debug, Default)]
pub(crate) struct Engine {
    pub backend: Backend,
    /// The symbolic engine's execution log (`None`: no log; the other back end has none).
    pub trace: Option<germanium_symbex::TraceSinks>,
}

/// Verifies the members `options` selects with the engine's back end.
pub(crate) fn verify_members(
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    engine: &Engine,
) -> ProgramResult {
    match engine.backend {
        Backend::Symbex => germanium_symbex::verify_members(
            program,
            semantics,
            sources,
            options,
            engine.trace.as_ref(),
        ),
        Backend::Vcg => germanium_vcg::verify_members(program, semantics, sources, options),
    }
}
