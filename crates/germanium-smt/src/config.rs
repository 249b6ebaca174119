//! Solver configuration: where Z3 is, which options it gets, how long we wait.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::command::SmtOption;
use crate::error::SolverError;

/// Environment variable naming the Z3 executable when no explicit path is given.
pub const Z3_ENV_VAR: &str = "Z3_EXE";

/// How a [`crate::Solver`] is started and guarded.
#[derive(Clone, Debug)]
pub struct SolverConfig {
    /// Explicit Z3 path (the CLI's `--z3`); otherwise `Z3_EXE`, otherwise `z3` on `PATH`.
    pub z3: Option<PathBuf>,
    /// Extra command-line arguments for Z3.
    pub args: Vec<String>,
    /// Options sent after the two the protocol needs (`:print-success` and
    /// `:global-declarations`, always first). Defaults to [`verifier_options`].
    pub options: Vec<SmtOption>,
    /// Ask Z3 to track named assertions for `get-unsat-core`.
    pub unsat_cores: bool,
    /// Solver timeout for queries that do not give their own.
    pub default_timeout: Option<Duration>,
    /// Extra wall-clock time granted beyond a query's solver timeout before the process is
    /// considered wedged and killed.
    pub guard_grace: Duration,
    /// Wall-clock bound on queries that have no solver timeout; `None` waits forever.
    pub untimed_query_guard: Option<Duration>,
    /// Wall-clock bound on answers to declarations, assertions, push/pop and options.
    pub command_guard: Duration,
    /// Write every command (and non-trivial answers, as comments) to this file. Name it
    /// `*.smt2` so that `z3 FILE` replays it.
    pub log: Option<PathBuf>,
    /// Read how many resource units each query used (one more exchange per query; always
    /// done when logging). See [`crate::SolverStats::last_query_resources`].
    pub measure_resources: bool,
    /// Z3's memory limit in megabytes (`memory_max_size`, for the whole process). A query
    /// that reaches it ends the process; the session restarts it and answers `unknown`
    /// with reason [`OUT_OF_MEMORY`].
    pub memory_limit_mb: Option<u64>,
    /// Send commands that answer `success` (declarations, assertions, push, pop, options)
    /// without waiting for the answer, and read those answers before the next command
    /// whose answer is needed: one round trip per query instead of one per command. A
    /// rejected command is then reported by that later call (with the command's text).
    pub pipeline: bool,
    /// When set, waiting for an answer stops as soon as it is cancelled: the process is
    /// killed and the call fails with [`crate::SolverError::Cancelled`] (a language server
    /// drops a run whose text has changed).
    pub cancel: Option<Cancel>,
    /// Answers kept between runs (see [`crate::answers`]): after the checkpoint, a query
    /// found there is answered without asking Z3, and Z3's answers are recorded there.
    pub answers: Option<std::sync::Arc<dyn crate::answers::AnswerStore>>,
}

/// A flag shared between a run and whoever may stop it; cloning shares it.
#[derive(Clone, Debug, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Stops every solver and run holding this flag (at their next wait or member).
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The `:reason-unknown` given to a query that ran into [`SolverConfig::memory_limit_mb`].
pub const OUT_OF_MEMORY: &str = "out of memory";

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            z3: None,
            args: Vec::new(),
            options: verifier_options(0),
            unsat_cores: false,
            default_timeout: None,
            guard_grace: Duration::from_secs(2),
            untimed_query_guard: None,
            command_guard: Duration::from_secs(60),
            log: None,
            measure_resources: false,
            memory_limit_mb: None,
            pipeline: false,
            cancel: None,
            answers: None,
        }
    }
}

/// Options suited to a symbolic-execution verifier: pattern-based quantifier instantiation
/// only (no MBQI), the case-split and arithmetic settings Viper's Silicon uses with recent
/// Z3 versions, models on, and fixed random seeds so runs are reproducible. Instances are
/// made eagerly up to Z3's default cost (Silicon's 100 lets a matching loop among the
/// sequence axioms run a hundred generations deep before anything else: one query of
/// list_insert_tmp.vpr then ran for minutes past its resource limit).
pub fn verifier_options(random_seed: u64) -> Vec<SmtOption> {
    vec![
        SmtOption::bool("auto_config", false),
        SmtOption::numeral("smt.case_split", 3),
        SmtOption::bool("smt.delay_units", true),
        SmtOption::bool("type_check", true),
        SmtOption::bool("smt.mbqi", false),
        SmtOption::bool("pp.bv_literals", false),
        SmtOption::numeral("smt.qi.eager_threshold", 10),
        SmtOption::numeral("smt.arith.solver", 2),
        SmtOption::numeral("smt.qi.max_multi_patterns", 1000),
        SmtOption::bool("model.partial", true),
        SmtOption::numeral("smt.random_seed", random_seed),
        SmtOption::numeral("sat.random_seed", random_seed),
        SmtOption::bool("produce-models", true),
    ]
}

/// Finds the Z3 executable: `explicit` if given, else `$Z3_EXE`, else `z3` on `PATH`.
/// A given path that is not an executable file is an error, not a reason to look elsewhere.
pub fn locate_z3(explicit: Option<&Path>) -> Result<PathBuf, SolverError> {
    if let Some(path) = explicit {
        return check_executable(path, "the path given with --z3");
    }
    if let Some(value) = std::env::var_os(Z3_ENV_VAR).filter(|v| !v.is_empty()) {
        return check_executable(Path::new(&value), &format!("${Z3_ENV_VAR}"));
    }
    let names: &[&str] = if cfg!(windows) {
        &["z3.exe", "z3"]
    } else {
        &["z3"]
    };
    if let Some(path_var) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path_var) {
            for name in names {
                let candidate = dir.join(name);
                if is_executable_file(&candidate) {
                    return Ok(candidate);
                }
            }
        }
    }
    Err(SolverError::NotFound(format!(
        "no Z3 executable: pass --z3 PATH, set ${Z3_ENV_VAR}, or put `z3` on PATH"
    )))
}

fn check_executable(path: &Path, origin: &str) -> Result<PathBuf, SolverError> {
    if is_executable_file(path) {
        Ok(path.to_path_buf())
    } else if path.is_file() {
        Err(SolverError::NotFound(format!(
            "{} ({origin}) is not executable",
            path.display()
        )))
    } else {
        Err(SolverError::NotFound(format!(
            "{} ({origin}) is not a file",
            path.display()
        )))
    }
}

fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_paths_are_checked() {
        let missing = Path::new("/definitely/not/here/z3");
        let err = locate_z3(Some(missing)).unwrap_err().to_string();
        assert!(
            err.contains("/definitely/not/here/z3") && err.contains("--z3"),
            "{err}"
        );
        let not_executable = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let err = locate_z3(Some(&not_executable)).unwrap_err().to_string();
        assert!(err.contains("not executable"), "{err}");
    }
}

/// The oldest Z3 Germanium is known to work with; the tested one is pinned by
/// `scripts/ensure-z3.sh` (4.15.4).
pub const OLDEST_Z3: (u32, u32, u32) = (4, 12, 0);

/// Asks the executable at `path` for its version (`z3 -version`, which prints
/// `Z3 version 4.15.4 - 64 bit`); an executable that does not answer so is not a Z3.
pub fn z3_version(path: &Path) -> Result<(u32, u32, u32), SolverError> {
    let out = std::process::Command::new(path)
        .arg("-version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| SolverError::NotFound(format!("cannot run `{}`: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_z3_version(&text).ok_or_else(|| {
        let said = text.lines().next().unwrap_or("").trim().to_string();
        let err = String::from_utf8_lossy(&out.stderr);
        let said = if said.is_empty() {
            err.lines().next().unwrap_or("nothing").trim().to_string()
        } else {
            said
        };
        SolverError::NotFound(format!(
            "`{}` is not a Z3 executable: asked for its version, it answered `{said}`",
            path.display()
        ))
    })
}

fn parse_z3_version(text: &str) -> Option<(u32, u32, u32)> {
    let rest = text.trim().strip_prefix("Z3 version ")?;
    let number = rest.split_whitespace().next()?;
    let mut parts = number.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_z3_prints() {
        assert_eq!(
            parse_z3_version("Z3 version 4.15.4 - 64 bit\n"),
            Some((4, 15, 4))
        );
        assert_eq!(
            parse_z3_version("Z3 version 4.8.12 - 64 bit"),
            Some((4, 8, 12))
        );
        assert_eq!(parse_z3_version("cat: invalid option -- 'v'"), None);
        assert_eq!(parse_z3_version(""), None);
    }

    #[test]
    fn a_program_that_is_not_z3_is_said_to_be_none() {
        let err = z3_version(Path::new("/bin/cat")).unwrap_err();
        assert!(err.to_string().contains("is not a Z3 executable"), "{err}");
    }
}
