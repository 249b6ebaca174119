//! Runs the front end (load, expand macros, check) over Viper's verification test
//! directories and compares the front-end errors (`parser.error`, `typechecker.error`,
//! `consistency.error`) with the annotations. Prints per-directory figures and mismatches.
//!
//!   cargo run --release -p germanium-semantics --example frontend_corpus [-- -v] [DIR...]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use germanium_syntax::ast::NodeIdGen;
use germanium_syntax::{expand_macros, load_program, SourceMap};

const DIRS: [&str; 9] = [
    "all",
    "quantifiedpermissions",
    "quantifiedpredicates",
    "quantifiedcombinations",
    "wands",
    "termination",
    "refute",
    "adt",
    "quasihavoc",
];
const FRONT: [&str; 3] = ["parser.error", "typechecker.error", "consistency.error"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "vpr") {
            out.push(p);
        }
    }
}

/// `(id, line)` of expected front-end errors.
fn expected(text: &str) -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    let mut pending: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("//::") {
            let mut r = rest;
            while let Some(p) = r.find("ExpectedOutput(") {
                let after = &r[p + "ExpectedOutput(".len()..];
                let end = after.find(')').unwrap_or(after.len());
                let id = after[..end].split(':').next().unwrap_or("").trim().to_string();
                pending.push(id);
                r = &after[end..];
            }
            continue;
        }
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        for id in pending.drain(..) {
            if FRONT.contains(&id.as_str()) {
                out.insert((id, i as u32 + 1));
            }
        }
    }
    out
}

fn run(path: &Path) -> BTreeSet<(String, u32, String)> {
    let mut sources = SourceMap::new();
    let mut ids = NodeIdGen::default();
    let (mut program, mut diags) = load_program(path, &[], &mut sources, &mut ids);
    let blocking = |d: &Vec<germanium_syntax::Diagnostic>| d.iter().any(|x| x.id == "parser.error");
    if !blocking(&diags) {
        diags.extend(expand_macros(&mut program, &mut ids));
    }
    if !blocking(&diags) {
        let (_, d) = germanium_semantics::check_program(&program, ids.count());
        diags.extend(d);
    }
    let main = sources.find(path);
    diags
        .into_iter()
        .filter(|d| FRONT.contains(&d.id.as_str()))
        .map(|d| {
            let line = if Some(d.span.file) == main || main.is_none() { sources.start(d.span).line } else { 0 };
            (d.id.clone(), line, d.message.clone())
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let dirs: Vec<String> = args.iter().filter(|a| !a.starts_with('-')).cloned().collect();
    let dirs: Vec<String> = if dirs.is_empty() { DIRS.iter().map(|s| s.to_string()).collect() } else { dirs };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/viper-tests");
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let (mut tot_ok_clean, mut tot_clean, mut tot_ok_err, mut tot_err) = (0, 0, 0, 0);
            for d in &dirs {
                let mut fs = Vec::new();
                files(&root.join(d), &mut fs);
                let (mut ok_clean, mut clean, mut ok_err, mut err) = (0, 0, 0, 0);
                for f in &fs {
                    let text = std::fs::read_to_string(f).unwrap_or_default();
                    let want = expected(&text);
                    let got_full = run(f);
                    let got: BTreeSet<(String, u32)> = got_full.iter().map(|(a, b, _)| (a.clone(), *b)).collect();
                    let pass = got == want;
                    if want.is_empty() {
                        clean += 1;
                        ok_clean += pass as u32;
                    } else {
                        err += 1;
                        ok_err += pass as u32;
                    }
                    if !pass && verbose {
                        println!("FAIL {}", f.strip_prefix(&root).unwrap_or(f).display());
                        for w in want.difference(&got) {
                            println!("  missing {} @{}", w.0, w.1);
                        }
                        for g in &got_full {
                            if !want.contains(&(g.0.clone(), g.1)) {
                                println!("  extra   {} @{}: {}", g.0, g.1, g.2);
                            }
                        }
                    }
                }
                println!("{d}: accepted-clean {ok_clean}/{clean}, expected-errors {ok_err}/{err}");
                tot_ok_clean += ok_clean;
                tot_clean += clean;
                tot_ok_err += ok_err;
                tot_err += err;
            }
            println!("TOTAL: clean {tot_ok_clean}/{tot_clean}, errors {tot_ok_err}/{tot_err}");
        })
        .expect("thread");
    handle.join().expect("join");
}
