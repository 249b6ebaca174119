//! Test support: a program from text, parsed and checked (panics on front-end errors).

use germanium_semantics::Semantics;
use germanium_syntax::ast::{NodeIdGen, Program};
use germanium_syntax::{expand_macros, parse_file, SourceMap};

pub(crate) fn checked(src: &str) -> (Program, Semantics, SourceMap) {
    let mut sources = SourceMap::new();
    let file = sources.add("t.vpr".into(), src.to_string());
    let mut ids = NodeIdGen::default();
    let (items, diags) = parse_file(file, src, &mut ids);
    assert!(diags.is_empty(), "{diags:?}");
    let mut program = Program {
        items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    expand_macros(&mut program, &mut ids);
    let (sem, errors) = germanium_semantics::check_program(&program, ids.count());
    assert!(errors.is_empty(), "{errors:?}");
    (program, sem, sources)
}
