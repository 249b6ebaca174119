//! `germanium verify|check [OPTIONS] FILE...`: runs the driver on each file (in parallel) and
//! prints the reports in input order. Exit status: 0 every file verified, 1 some file has
//! errors, 2 usage error or Germanium could not finish some file.

mod args;
mod inputs;
mod output;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::mpsc;

use clap::Parser;
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use germanium_driver::{FileReport, Outcome};
use rayon::prelude::*;

use args::{Cli, Command, DebugArgs, Format};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some((mode, args)) = cli.command.mode_and_args() else {
        let Command::Debug(args) = &cli.command else {
            unreachable!("verify and check have a mode")
        };
        return debug(args);
    };
    if mode == germanium_driver::Mode::Verify {
        if let Err(code) = check_solver(args.program.z3.as_deref()) {
            return code;
        }
    }
    // A directory stands for the `.vpr` files under it; a file that cannot be read gets
    // its own error report, and the others are still processed.
    let files = inputs::expand(&args.files);
    let file_workers = if files.len() == 1 {
        1
    } else {
        args.worker_count()
    };
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(file_workers)
        .build()
    {
        Ok(pool) => pool,
        Err(err) => {
            eprintln!("germanium: error: cannot start worker threads: {err}");
            return ExitCode::from(2);
        }
    };

    // Workers send (input index, report); reports are printed as soon as all earlier ones are.
    let (sender, receiver) = mpsc::channel::<(usize, FileReport)>();
    let count = files.len();
    let mut options = args.options(mode);
    options.jobs = if count == 1 { args.worker_count() } else { 1 };
    let trace = match &args.trace {
        Some(path) => match germanium_trace_log::Writer::create(path) {
            Ok(writer) => {
                options.trace = Some(writer.sinks());
                Some((path, writer))
            }
            Err(err) => {
                eprintln!(
                    "germanium: error: cannot write the execution log `{}`: {err}",
                    path.display()
                );
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    pool.spawn(move || {
        files
            .par_iter()
            .enumerate()
            .for_each_with(sender, |sender, (index, file)| {
                let options = inputs::for_file(&options, index, file, count);
                let _ = sender.send((index, germanium_driver::run_file(file, &options)));
            });
    });

    let color = if std::io::stdout().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut stdout = StandardStream::stdout(color);
    let mut waiting = BTreeMap::new();
    let mut next = 0;
    let mut worst = Outcome::Verified;
    for (index, report) in receiver {
        waiting.insert(index, report);
        while let Some(report) = waiting.remove(&next) {
            worst = worse(worst, report.result);
            let written = match args.format {
                Format::Json => writeln!(stdout, "{}", output::json::render(&report)),
                Format::Human => output::human::write_report(&mut stdout, &report),
            };
            if written.is_err() {
                return ExitCode::from(2); // stdout closed
            }
            next += 1;
        }
    }
    if next != count {
        eprintln!("germanium: error: a worker thread died before reporting");
        return ExitCode::from(2);
    }
    if let Some((path, writer)) = trace {
        if let Err(err) = writer.finish() {
            let path = path.display();
            eprintln!("germanium: error: the execution log `{path}` is incomplete: {err}");
            return ExitCode::from(2);
        }
    }
    match worst {
        Outcome::Verified => ExitCode::SUCCESS,
        Outcome::Failed => ExitCode::from(1),
        Outcome::Error => ExitCode::from(2),
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

/// Checks once that the Z3 to be used works, before any file is verified: an error (no
/// Z3, not executable, not a Z3) ends the run with status 2; a Z3 older than the oldest
/// known to work gets a warning.
fn check_solver(explicit: Option<&std::path::Path>) -> Result<(), ExitCode> {
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
            Ok(())
        }
        Err(message) => {
            eprintln!("germanium: error: {message}");
            Err(ExitCode::from(2))
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
    if let Err(code) = check_solver(args.program.z3.as_deref()) {
        return code;
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
