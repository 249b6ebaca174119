//! What every fuzz target runs: Germanium's front end as the driver runs it, plus the
//! invariants a crash-free run must still satisfy.

pub mod generate;

use std::collections::VecDeque;
use std::path::PathBuf;

use germanium_syntax::ast::{ImportTarget, ItemKind, NodeIdGen, Program};
use germanium_syntax::loader::stdlib;
use germanium_syntax::{Diagnostic, SourceMap};

/// The driver's front-end thread stack (`germanium_driver::DEFAULT_STACK_SIZE`, not a
/// dependency here because the driver pulls in the solver crates). Running on a stack of the
/// same size means a stack overflow found here also happens in the `germanium` binary.
const STACK_SIZE: usize = 256 * 1024 * 1024;

/// Parses `text` as a main file, loads the standard-library files it imports with `<...>`,
/// expands macros and type-checks, stopping after the first stage that reports anything
/// (as `germanium_driver` does). Panics, which the fuzzer reports, if any stage panics or a
/// diagnostic has no valid position.
pub fn run_front_end(text: &str) {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || stages(text))
            .expect("spawn the front-end thread");
        if let Err(payload) = worker.join() {
            std::panic::resume_unwind(payload);
        }
    });
}

fn stages(text: &str) {
    let mut sources = SourceMap::new();
    let mut ids = NodeIdGen::default();
    let (mut program, diagnostics) = load(text, &mut sources, &mut ids);
    if !diagnostics.is_empty() {
        return assert_positioned(&sources, &diagnostics);
    }
    let diagnostics = germanium_syntax::expand_macros(&mut program, &mut ids);
    if !diagnostics.is_empty() {
        return assert_positioned(&sources, &diagnostics);
    }
    let (_semantics, diagnostics) = germanium_semantics::check_program(&program, ids.count());
    assert_positioned(&sources, &diagnostics);
}

/// Like `germanium_syntax::load_program`, but the main file comes from memory and only
/// library imports are followed: fuzz inputs must not read the file system.
fn load(text: &str, sources: &mut SourceMap, ids: &mut NodeIdGen) -> (Program, Vec<Diagnostic>) {
    let main = sources.add(PathBuf::from("fuzz.vpr"), text.to_string());
    let mut pending = VecDeque::from([main]);
    let mut loaded_library_files = Vec::new();
    let mut items = Vec::new();
    let mut diagnostics = Vec::new();
    while let Some(file) = pending.pop_front() {
        let (file_items, file_diagnostics) =
            germanium_syntax::parse_file(file, &sources.get(file).text.clone(), ids);
        diagnostics.extend(file_diagnostics);
        for item in &file_items {
            let ItemKind::Import(import) = &item.kind else {
                continue;
            };
            let ImportTarget::Standard(name) = &import.target else {
                continue;
            };
            if let Some((name, library_text)) = stdlib::lookup(name) {
                if !loaded_library_files.contains(&name) {
                    let path = PathBuf::from(stdlib::STD_PREFIX).join(&name);
                    loaded_library_files.push(name);
                    pending.push_back(sources.add(path, library_text.to_string()));
                }
            }
        }
        items.extend(file_items);
    }
    (
        Program {
            items,
            macros_expanded: false,
        },
        diagnostics,
    )
}

/// Every diagnostic must point into a loaded file, on character boundaries (the human output
/// slices the text there), with `start <= end`, and carry an id and a message.
pub fn assert_positioned(sources: &SourceMap, diagnostics: &[Diagnostic]) {
    let file_count = sources.files().count();
    for d in diagnostics {
        assert!(
            !d.id.is_empty() && !d.message.is_empty(),
            "diagnostic without id or message: {d:?}"
        );
        assert!(
            d.id != "internal",
            "internal diagnostic from the front end: {d:?}"
        );
        assert!(
            (d.span.file.0 as usize) < file_count,
            "diagnostic in an unknown file: {d:?}"
        );
        let text = &sources.get(d.span.file).text;
        let (start, end) = (d.span.start as usize, d.span.end as usize);
        assert!(
            start <= end && end <= text.len(),
            "span outside its file ({} bytes): {d:?}",
            text.len()
        );
        assert!(
            text.is_char_boundary(start) && text.is_char_boundary(end),
            "span not on character boundaries: {d:?}"
        );
        let position = sources.start(d.span);
        assert!(position.line >= 1 && position.column >= 1);
    }
}
