//! The engine's layers depend one way. Reads the crate's sources and fails when a top-level
//! module refers to one above it, or when a layer uses what it must not (the solver below
//! the decider, Viper's syntax inside the decider, a chunk's insides outside `resources`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The top-level modules, lowest first: each may use only those before it.
const LAYERS: &[&str] = &[
    "errors",
    "state",
    "env",
    "decider",
    "trace",
    "resources",
    "rules",
    "run",
];

/// What a layer must not mention at all (checked as plain text in its code).
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("errors", &["Solver", "germanium_smt"]),
    ("state", &["Solver", "SolverError", "germanium_syntax::ast"]),
    ("env", &["Solver", "SolverError"]),
    ("decider", &["germanium_syntax", "germanium_semantics"]),
    ("trace", &["Solver", "germanium_smt"]),
    ("resources", &["germanium_syntax::ast", "Diagnostic"]),
    // Only `resources` looks inside a chunk: the rules go through its functions.
    ("rules", &[".chunks", "Chunk"]),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`None` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib").then_some(name)
}

/// The code of a file without comments (a doc comment may name any layer).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every top-level module named as `crate::<module>` in `code`.
fn crate_references(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
        rest = after;
    }
    out
}

#[test]
fn layers_depend_only_downwards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        seen.insert(module.clone());
        let Some(own) = rank(&module) else {
            problems.push(format!(
                "{}: top-level module `{module}` is not in the list of layers",
                file.display()
            ));
            continue;
        };
        let text = code(&std::fs::read_to_string(file).unwrap());
        for used in crate_references(&text) {
            match rank(&used) {
                Some(r) if r < own || used == module => {}
                Some(_) => problems.push(format!(
                    "{}: `{module}` uses `{used}`, a layer above it",
                    file.display()
                )),
                // A re-export from lib.rs (e.g. `crate::VerifyOptions`) belongs to `run`.
                None if module == "run" => {}
                None => problems.push(format!(
                    "{}: `{module}` uses `crate::{used}`, which is not a layer",
                    file.display()
                )),
            }
        }
        if text.contains("super::super") && !file.ends_with("mod.rs") {
            problems.push(format!(
                "{}: reaches out of its module with `super::super`",
                file.display()
            ));
        }
        for (layer, words) in FORBIDDEN {
            if *layer == module {
                for word in *words {
                    if text.contains(word) {
                        problems.push(format!(
                            "{}: `{module}` must not use `{word}`",
                            file.display()
                        ));
                    }
                }
            }
        }
    }
    for layer in LAYERS {
        assert!(seen.contains(*layer), "layer `{layer}` has no sources");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_references() {
    let refs =
        crate_references("use crate::rules::context::Verifier; x = crate::state::Heap::new();");
    assert_eq!(refs.into_iter().collect::<Vec<_>>(), ["rules", "state"]);
    assert_eq!(code("let a = 1; // crate::run\n"), "let a = 1; ");
}
