//! Small annotated Viper programs verified by the verification-condition back end: every
//! `//:: ExpectedOutput(id)` must be reported on the next code line, as often as it is
//! written there, and nothing else may be reported. A first line `// options: ...` sets
//! options (`--combinable-wands`).

use std::path::{Path, PathBuf};

use germanium_driver::{run_file, Backend, Mode, Options};

fn expected(text: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut pending = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("//:: ExpectedOutput(") {
            pending.push(rest.trim_end_matches(')').to_string());
        } else if !trimmed.is_empty() && !trimmed.starts_with("//") {
            for id in pending.drain(..) {
                out.push((i as u32 + 1, id));
            }
        }
    }
    out.sort();
    out
}

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut options = Options::new(Mode::Verify);
    options.backend = Backend::Vcg;
    // A program may ask for options on its first line: `// options: --combinable-wands`.
    if let Some(rest) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// options:"))
    {
        for option in rest.split_whitespace() {
            match option {
                "--combinable-wands" => options.combinable_wands = true,
                other => panic!("{}: unknown option {other}", path.display()),
            }
        }
    }
    let report = run_file(path, &options);
    let mut reported: Vec<(u32, String)> = report
        .diagnostics
        .iter()
        .map(|d| (report.sources.start(d.span).line, d.id.clone()))
        .collect();
    reported.sort();
    let wanted = expected(&text);
    if reported == wanted {
        Ok(())
    } else {
        let messages: Vec<String> = report
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.id, d.message))
            .collect();
        Err(format!(
            "{}: expected {wanted:?}, reported {reported:?}\n{}",
            path.display(),
            messages.join("\n")
        ))
    }
}

#[test]
fn annotated_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "vpr"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().filter_map(|f| check(f).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
