//! `germanium verify|check [OPTIONS] FILE...`: runs the driver on each file (in parallel) and
//! prints the reports in input order. Exit status: 0 every file verified, 1 some file has
//! errors, 2 usage error or Germanium could not finish some file.

mod args;
mod inputs;
mod output;
mod run;

use std::process::ExitCode;

use clap::Parser;
use germanium_driver::Outcome;

use args::{Cli, Command, DebugArgs, LspArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some((mode, args)) = cli.command.mode_and_args() else {
        return match &cli.command {
            Command::Debug(args) => debug(args),
            Command::Cache { action } => cache(action),
            Command::Lsp(args) => lsp(args),
            Command::Action(args) => action(args),
            Command::Verify(_) | Command::Check(_) => unreachable!("they have a mode"),
        };
    };
    // A Z3 that cannot be used is found once, here; each file then reports it as its one
    // `internal` error (after its own syntax and type errors), as the JSON contract says.
    let solver = match mode {
        germanium_driver::Mode::Verify => Some(check_solver(args.program.z3.as_deref())),
        germanium_driver::Mode::Check => None,
    };
    let solver_problem = solver.as_ref().and_then(|s| s.as_ref().err().cloned());
    let cache = match solver {
        Some(Ok(version)) => cache_settings(args, version),
        _ => None,
    };
    run::run_files(mode, args, solver_problem, cache)
}

/// Where the result cache is and what its keys are salted with (the build, Z3's version,
/// the options that change results), unless `--no-cache` or an option that needs every
/// member run (`--member`, `--trace`, `--smt-log`).
fn cache_settings(
    args: &args::RunArgs,
    version: (u32, u32, u32),
) -> Option<germanium_driver::CacheSettings> {
    let needs_runs = !args.members.is_empty() || args.trace.is_some() || args.smt_log.is_some();
    if args.no_cache || needs_runs {
        return None;
    }
    germanium_driver::CacheSettings::for_run(version, &args.options(germanium_driver::Mode::Verify))
}

/// `germanium action`: a remote action's work on the worker. Exit status 0 when the results
/// are written (verification errors are results), 3 when they are written but hold an
/// `internal` error (so that no cluster caches them), 2 when they cannot be written.
fn action(args: &args::ActionArgs) -> ExitCode {
    let failed = |message: String| {
        eprintln!("germanium: error: {message}");
        ExitCode::from(2)
    };
    let manifest = match std::fs::read(&args.manifest) {
        Ok(bytes) => match germanium_driver::protocol::Manifest::parse(&bytes) {
            Ok(m) => m,
            Err(e) => return failed(e),
        },
        Err(e) => return failed(format!("{}: {e}", args.manifest.display())),
    };
    let mut options = args.options();
    if let Err(problem) = check_solver(args.program.z3.as_deref()) {
        return failed(problem);
    }
    options.solver_problem = None;
    let dir = args
        .manifest
        .parent()
        .map(|d| d.to_path_buf())
        .unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        dir
    };
    match germanium_driver::run_action(&dir, &manifest, &options) {
        Ok(results) => match std::fs::write(&args.output, results.to_bytes()) {
            Ok(()) => {
                let transient = results
                    .results
                    .iter()
                    .flat_map(|r| &r.diagnostics)
                    .any(|d| d.id.starts_with("internal"));
                if transient {
                    ExitCode::from(germanium_driver::protocol::TRANSIENT_EXIT as u8)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(e) => failed(format!("{}: {e}", args.output.display())),
        },
        Err(e) => failed(e),
    }
}

/// `germanium cache clear`.
fn cache(action: &args::CacheAction) -> ExitCode {
    let args::CacheAction::Clear = action;
    let Some(path) = germanium_cache::ResultCache::default_path() else {
        eprintln!("germanium: error: no cache directory is known on this system");
        return ExitCode::from(2);
    };
    match germanium_cache::ResultCache::clear(&path) {
        Ok(()) => {
            println!(
                "germanium: the result cache at `{}` is empty",
                path.display()
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!(
                "germanium: error: cannot remove `{}`: {err}",
                path.display()
            );
            ExitCode::from(2)
        }
    }
}

fn worse(a: Outcome, b: Outcome) -> Outcome {
    let rank = |o| match o {
        Outcome::Verified => 0,
        Outcome::Failed => 1,
        Outcome::Error => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// Checks once that the Z3 to be used works, before any file is verified: why it cannot be
/// used (no Z3, not executable, not a Z3), or a warning on stderr for a Z3 older than the
/// oldest known to work.
fn check_solver(explicit: Option<&std::path::Path>) -> Result<(u32, u32, u32), String> {
    match germanium_driver::check_solver(explicit) {
        Ok(check) => {
            if check.too_old {
                let (a, b, c) = check.version;
                eprintln!(
                    "germanium: warning: Z3 {a}.{b}.{c} at `{}` is older than Germanium supports \
                     (4.12 or later; tested with 4.15.4, which scripts/ensure-z3.sh installs): \
                     results may be wrong or missing",
                    check.path.display()
                );
            }
            Ok(check.version)
        }
        Err(message) => Err(message),
    }
}

/// `germanium lsp`: a Z3 that cannot be used is each run's error, shown in the editor;
/// only protocol messages go to stdout.
fn lsp(args: &LspArgs) -> ExitCode {
    let mut options = args.options();
    match check_solver(args.program.z3.as_deref()) {
        Ok(version) if !args.no_cache => {
            options.cache = germanium_driver::CacheSettings::for_run(version, &options);
        }
        Ok(_) => {}
        Err(problem) => options.solver_problem = Some(problem),
    }
    let settings = germanium_lsp::Settings {
        options,
        debounce: std::time::Duration::from_millis(args.debounce_ms),
    };
    match germanium_lsp::run_stdio(settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("germanium: error: the language server stopped: {err}");
            ExitCode::from(2)
        }
    }
}

/// `germanium debug FILE`: verify with the log on, then serve the page until stopped.
fn debug(args: &DebugArgs) -> ExitCode {
    if !args.file.is_file() {
        let file = args.file.display();
        eprintln!("germanium: error: `{file}` is not a readable file");
        return ExitCode::from(2);
    }
    if let Err(message) = check_solver(args.program.z3.as_deref()) {
        eprintln!("germanium: error: {message}");
        return ExitCode::from(2);
    }
    eprintln!("germanium: verifying {} ...", args.file.display());
    let session = match germanium_debugger::Session::start(&args.file, args.options()) {
        Ok(session) => session,
        Err(err) => {
            eprintln!("germanium: error: {err}");
            return ExitCode::from(2);
        }
    };
    eprintln!("germanium: {}: {}", args.file.display(), session.result());
    match germanium_debugger::serve(session, args.port, &mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("germanium: error: cannot serve the debugger: {err}");
            ExitCode::from(2)
        }
    }
}
