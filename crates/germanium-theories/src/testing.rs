//! Test support shared with the engine's tests: a Viper program from text or a file,
//! parsed and checked. Not for production use: it panics on front-end errors.

use std::path::Path;

use germanium_syntax::ast::{NodeIdGen, Program};
use germanium_syntax::{expand_macros, load_program, parse_file, FileId, SourceMap};

/// Parses and checks a program given as text; panics on front-end errors.
pub fn checked(src: &str) -> (Program, germanium_semantics::Semantics) {
    let mut sources = SourceMap::new();
    let file = sources.add("test.vpr".into(), src.to_string());
    assert_eq!(file, FileId(0));
    let mut ids = NodeIdGen::default();
    let (items, diags) = parse_file(file, src, &mut ids);
    assert!(diags.is_empty(), "parse errors: {diags:?}");
    let mut program = Program {
        items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    let diags = expand_macros(&mut program, &mut ids);
    assert!(diags.is_empty(), "macro errors: {diags:?}");
    let (sem, diags) = germanium_semantics::check_program(&program, ids.count());
    assert!(diags.is_empty(), "semantic errors: {diags:?}");
    (program, sem)
}

/// Loads a corpus file; `None` if the front end rejects it (such files test the front end).
pub fn checked_file(path: &Path) -> Option<(Program, germanium_semantics::Semantics)> {
    let mut sources = SourceMap::new();
    let mut ids = NodeIdGen::default();
    let (mut program, diags) = load_program(path, &[], &mut sources, &mut ids);
    if !diags.is_empty() || !expand_macros(&mut program, &mut ids).is_empty() {
        return None;
    }
    let (sem, diags) = germanium_semantics::check_program(&program, ids.count());
    diags.is_empty().then_some((program, sem))
}
