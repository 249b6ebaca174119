//! Shared helpers for the tests that run a real Z3.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use germanium_smt::{FunDecl, SolverConfig, Sort, Symbol, Term};

/// Z3 from `$Z3_EXE`, else the copy the project scripts install under `.tools`. Fails the
/// test (never skips it) when neither exists.
pub fn z3_path() -> PathBuf {
    if let Some(path) = std::env::var_os("Z3_EXE").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/z3-solver/bin/z3");
    assert!(
        installed.is_file(),
        "no Z3 for the tests: set Z3_EXE, or run `pip install --target .tools/z3-solver \
         z3-solver==4.15.4.0` in the workspace root (looked for {})",
        installed.display()
    );
    installed
}

pub fn config() -> SolverConfig {
    SolverConfig {
        z3: Some(z3_path()),
        ..SolverConfig::default()
    }
}

/// A scratch file path unique to this process and `name`; see [`remove_scratch_file`].
pub fn scratch_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("germanium-smt-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir.join(name)
}

/// Removes a scratch file, and its directory once empty (other tests may still use it).
pub fn remove_scratch_file(path: &Path) {
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
}

pub fn int_const(name: &str) -> (FunDecl, Term) {
    let decl = FunDecl::constant(Symbol::user(name), Sort::Int);
    let term = Term::constant(&decl);
    (decl, term)
}

pub fn real_const(name: &str) -> (FunDecl, Term) {
    let decl = FunDecl::constant(Symbol::user(name), Sort::Real);
    let term = Term::constant(&decl);
    (decl, term)
}

pub fn bool_const(name: &str) -> (FunDecl, Term) {
    let decl = FunDecl::constant(Symbol::user(name), Sort::Bool);
    let term = Term::constant(&decl);
    (decl, term)
}

/// `x^3 + y^3 = z^3` with positive `x, y, z`: unsatisfiable, but far beyond Z3's
/// non-linear arithmetic within a short timeout.
pub fn hard_formula(x: &Term, y: &Term, z: &Term) -> Term {
    let cube = |t: &Term| Term::mul(vec![t.clone(), t.clone(), t.clone()]);
    Term::and(vec![
        Term::gt(x.clone(), Term::int(1)),
        Term::gt(y.clone(), Term::int(1)),
        Term::gt(z.clone(), Term::int(1)),
        Term::eq(Term::add(vec![cube(x), cube(y)]), cube(z)),
    ])
}

/// Kills a process we started (a solver's Z3) by its id.
pub fn kill_process(pid: u32) {
    let status = std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid} failed");
}
