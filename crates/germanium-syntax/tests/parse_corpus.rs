//! Parses every `.vpr` file of the shared test corpus (`../shared/viper-tests` and
//! `../shared/seed-tests`) and expands its macros (each file on its own, imports ignored).
//!
//! A file without an `ExpectedOutput(parser.error...)` annotation must give no `parser.error`;
//! a file with one must give a `parser.error` on each annotated line and on no other line.
//! Annotations on `import` lines are the loader's business and are not checked here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use germanium_syntax::ast::{NodeIdGen, Program};
use germanium_syntax::{expand_macros, parse_file, FileId, SourceFile};

/// Directories whose files are written for other tools (Viper plugins not part of the
/// language Germanium accepts); none so far.
const SKIPPED_DIRS: &[&str] = &[];

/// Files that are not valid Viper although unannotated (Viper's test suite does not run them),
/// with the reason.
const KNOWN_INVALID: &[(&str, &str)] = &[(
    "viper-tests/graphs/static/tests/lists/create_edge1.vpr",
    "defines the macro PROTECTED_GRAPH twice, which Viper's macro expander rejects",
)];

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn vpr_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if !SKIPPED_DIRS
                .iter()
                .any(|s| p.file_name().is_some_and(|n| n == *s))
            {
                vpr_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "vpr") {
            out.push(p);
        }
    }
}

/// Lines (1-based) annotated with `ExpectedOutput(parser.error...)`, and whether the
/// annotated line is an `import`.
fn expected_parser_errors(text: &str) -> Vec<(u32, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("//::") && t.contains("ExpectedOutput(parser.error") {
            let target = (i + 1..lines.len()).find(|&j| {
                let l = lines[j].trim();
                !l.is_empty() && !l.starts_with("//")
            });
            if let Some(j) = target {
                out.push((j as u32 + 1, lines[j].trim_start().starts_with("import")));
            }
        }
    }
    out
}

#[test]
fn corpus_parses_as_annotated() {
    let root = corpus_root();
    let mut files = Vec::new();
    vpr_files(&root.join("viper-tests"), &mut files);
    vpr_files(&root.join("seed-tests"), &mut files);
    assert!(!files.is_empty(), "no corpus at {}", root.display());

    let mut failures = Vec::new();
    let (mut clean, mut with_errors, mut import_only) = (0, 0, 0);
    let started = Instant::now();
    let mut parse_time = std::time::Duration::ZERO;
    let mut warnings = Vec::new();
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let t0 = Instant::now();
        let mut ids = NodeIdGen::default();
        let (items, mut diags) = parse_file(FileId(0), &text, &mut ids);
        let mut program = Program {
            items,
            macros_expanded: false,
            expanded_macros: Vec::new(),
        };
        diags.extend(expand_macros(&mut program, &mut ids));
        parse_time += t0.elapsed();

        let file = SourceFile::new(path.clone(), text.clone());
        let reported: BTreeSet<u32> = diags
            .iter()
            .filter(|d| d.id == "parser.error")
            .map(|d| file.line_col(d.span.start).line)
            .collect();
        let expected = expected_parser_errors(&text);
        for d in diags.iter().filter(|d| d.id == "parser.warning") {
            warnings.push(format!(
                "{}:{}: {}",
                path.display(),
                file.line_col(d.span.start).line,
                d.message
            ));
        }
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        if KNOWN_INVALID.iter().any(|(f, _)| name == *f) {
            assert!(
                !reported.is_empty(),
                "{name} is listed as invalid but parses"
            );
            continue;
        }
        if expected.is_empty() {
            clean += 1;
            if !reported.is_empty() {
                let msgs: Vec<String> = diags
                    .iter()
                    .filter(|d| d.id == "parser.error")
                    .map(|d| format!("{}: {}", file.line_col(d.span.start).line, d.message))
                    .collect();
                failures.push(format!("{name}: unexpected parser errors: {msgs:?}"));
            }
            continue;
        }
        if expected.iter().all(|(_, import)| *import) {
            import_only += 1;
            continue;
        }
        with_errors += 1;
        let wanted: BTreeSet<u32> = expected
            .iter()
            .filter(|(_, i)| !*i)
            .map(|(l, _)| *l)
            .collect();
        let extra: Vec<u32> = reported.difference(&wanted).copied().collect();
        let missing: Vec<u32> = wanted.difference(&reported).copied().collect();
        if !extra.is_empty() || !missing.is_empty() {
            let msgs: Vec<String> = diags
                .iter()
                .map(|d| {
                    format!(
                        "{} {}: {}",
                        d.id,
                        file.line_col(d.span.start).line,
                        d.message
                    )
                })
                .collect();
            failures.push(format!(
                "{name}: missing errors on lines {missing:?}, extra on {extra:?}: {msgs:?}"
            ));
        }
    }
    println!(
        "corpus: {} files; {clean} without parser errors expected, {with_errors} with, {import_only} only at imports (loader); {} failures; parse+expand {:?} (total {:?})",
        files.len(),
        failures.len(),
        parse_time,
        started.elapsed()
    );
    for w in &warnings {
        println!("warning {w}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} corpus files parse differently from their annotations",
        failures.len()
    );
}
