//! The theories of real corpus programs (Viper's own tests, read in place) are accepted by
//! Z3, and the preamble alone is answered quickly and, where it holds no user axioms,
//! is not inconsistent.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use germanium_smt::{QueryLimits, SatResult};
use germanium_syntax::ast::ItemKind;

use super::tests::{checked_file, solver};
use super::Theories;

const DIRS: [&str; 7] = [
    "all/sequences",
    "all/sets",
    "all/multisets",
    "all/maps",
    "all/domains",
    "all/third_party",
    "adt",
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "vpr") {
            out.push(p);
        }
    }
}

#[test]
fn corpus_preambles_are_accepted_by_z3() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/viper-tests");
    assert!(root.is_dir(), "the corpus is missing at {}", root.display());
    let mut paths = Vec::new();
    for dir in DIRS {
        files(&root.join(dir), &mut paths);
    }
    let mut solver = solver();
    let (mut checked, mut slowest, mut unsat_with_user_axioms) = (0, Duration::ZERO, Vec::new());
    for path in &paths {
        let Some((program, sem)) = checked_file(path) else {
            continue;
        };
        let th =
            Theories::new(&program, &sem).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        solver.reset().expect("reset");
        if let Err(e) = th.declare_in(&mut solver) {
            panic!("{}: Z3 rejects the preamble: {e}", path.display());
        }
        let started = Instant::now();
        let answer = solver
            .check_sat(QueryLimits::timeout(Duration::from_secs(10)))
            .expect("check-sat");
        let took = started.elapsed();
        slowest = slowest.max(took);
        assert!(
            took < Duration::from_secs(2),
            "{}: preamble took {took:?}",
            path.display()
        );
        let user_axioms = program
            .items
            .iter()
            .any(|i| matches!(&i.kind, ItemKind::Domain(d) if !d.axioms.is_empty()));
        if answer == SatResult::Unsat {
            assert!(
                user_axioms,
                "{}: the built-in theories alone are inconsistent",
                path.display()
            );
            unsat_with_user_axioms.push(path.display().to_string());
        }
        checked += 1;
    }
    assert!(
        checked >= 40,
        "only {checked} corpus files got through the front end"
    );
    eprintln!(
        "{checked} corpus preambles accepted; slowest check-sat {slowest:?}; unsat from user axioms: {unsat_with_user_axioms:?}"
    );
}
