//! `verify` and `check` over many files: files in parallel (members in parallel when there is
//! one), reports printed in input order as soon as all earlier ones are, member events
//! streamed as they come (`--format json-stream`), and a progress line on a terminal.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use germanium_driver::{FileReport, MemberEvent, MemberEvents, Mode, Outcome, Stage};
use rayon::prelude::*;

use crate::args::{Format, RunArgs};
use crate::output::progress::Progress;
use crate::output::stats::MemberRow;
use crate::{inputs, output, worse};

/// What the workers tell the printing thread.
enum Message {
    Member(usize, MemberEvent),
    File(usize, FileReport),
}

/// How often the progress line is redrawn; `GERMANIUM_PROGRESS_MS` sets another period
/// (`0`: at every event, which tests use so that what they see does not depend on timing).
fn progress_tick() -> Duration {
    std::env::var("GERMANIUM_PROGRESS_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_millis(250), Duration::from_millis)
}

/// Runs `mode` over the files `args` names; `solver_problem` says why Z3 cannot be used,
/// if it cannot (each file then reports it instead of being verified).
pub fn run_files(
    mode: Mode,
    args: &RunArgs,
    solver_problem: Option<String>,
    cache: Option<germanium_driver::CacheSettings>,
) -> ExitCode {
    // A directory stands for the `.vpr` files under it; a file that cannot be read gets
    // its own error report, and the others are still processed.
    let files = inputs::expand(&args.files);
    let count = files.len();
    let file_workers = if count == 1 { 1 } else { args.worker_count() };
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
    let mut options = args.options(mode);
    options.jobs = if count == 1 { args.worker_count() } else { 1 };
    options.solver_problem = solver_problem;
    options.cache = cache;
    if mode == Mode::Verify {
        let germanium = match std::env::current_exe() {
            Ok(path) => path,
            Err(err) => {
                eprintln!(
                    "germanium: error: cannot find this executable for remote actions: {err}"
                );
                return ExitCode::from(2);
            }
        };
        options.remote = args.remote.options(germanium);
    }
    if options.remote.is_some() {
        // Ctrl-C cancels the cluster's operations (and stops local solvers); a second one
        // ends the process at once.
        let cancel = germanium_driver::Cancel::new();
        let on_signal = cancel.clone();
        let handled = ctrlc::set_handler(move || {
            if on_signal.is_cancelled() {
                std::process::exit(130);
            }
            eprintln!("germanium: cancelling (Ctrl-C again to stop at once)");
            on_signal.cancel();
        });
        if handled.is_ok() {
            options.cancel = Some(cancel);
        }
    }
    if args.trace.is_some() && options.backend != germanium_driver::Backend::Symbex {
        eprintln!(
            "germanium: error: the execution log (`--trace`) is the symbolic engine's: use it \
             with `--backend symbex`"
        );
        return ExitCode::from(2);
    }
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
    let mut progress = (args.format == Format::Human && std::io::stderr().is_terminal())
        .then(|| Progress::new(count));
    let want_stats = args.stats;
    let want_events = args.format == Format::JsonStream || progress.is_some() || want_stats;
    // With `--stats`: each file's verified members and their statistics, as they finish.
    let mut stats: BTreeMap<usize, Vec<MemberRow>> = BTreeMap::new();

    let (sender, receiver) = mpsc::channel::<Message>();
    let names = files.clone();
    pool.spawn(move || {
        files
            .par_iter()
            .enumerate()
            .for_each_with(sender, |sender, (index, file)| {
                let mut options = inputs::for_file(&options, index, file, count);
                if want_events {
                    // The file's worker threads share one sender (senders are `Sync`).
                    let events = sender.clone();
                    options.events = Some(MemberEvents(Arc::new(move |event| {
                        let _ = events.send(Message::Member(index, event));
                    })));
                }
                let report = germanium_driver::run_file(file, &options);
                let _ = sender.send(Message::File(index, report));
            });
    });

    let color = if std::io::stdout().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut stdout = StandardStream::stdout(color);
    let mut stderr = std::io::stderr();
    let mut waiting = BTreeMap::new();
    let mut next = 0;
    let mut worst = Outcome::Verified;
    let tick = progress_tick();
    let mut last_drawn = std::time::Instant::now();
    loop {
        // Redrawn every tick, whether messages keep coming or none does.
        if let Some(p) = progress.as_mut() {
            if last_drawn.elapsed() >= tick {
                p.draw(&mut stderr);
                last_drawn = std::time::Instant::now();
            }
        }
        let message = match receiver.recv_timeout(tick.max(Duration::from_millis(10))) {
            Ok(message) => message,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let written = match message {
            Message::Member(index, event) => {
                if let (
                    true,
                    MemberEvent::Finished {
                        member,
                        kind,
                        stats: Some(s),
                        ..
                    },
                ) = (want_stats, &event)
                {
                    stats.entry(index).or_default().push(MemberRow {
                        member: member.clone(),
                        kind,
                        stats: *s,
                    });
                }
                member_event(
                    &mut stdout,
                    args.format,
                    &names[index],
                    index,
                    event,
                    &mut progress,
                    want_stats,
                )
            }
            Message::File(index, report) => {
                if let Some(p) = progress.as_mut() {
                    p.file_done();
                }
                waiting.insert(index, report);
                let mut written = Ok(());
                while let Some(report) = waiting.remove(&next) {
                    worst = worse(worst, report.result);
                    let rows = want_stats.then(|| stats.remove(&next).unwrap_or_default());
                    let rows = rows.as_deref();
                    if let Some(p) = progress.as_mut() {
                        p.clear(&mut stderr);
                    }
                    written = written.and_then(|_| match args.format {
                        Format::Json => {
                            writeln!(stdout, "{}", output::json::render(&report, rows))
                        }
                        Format::JsonStream => {
                            let line = output::json::render_file_event(&report, rows);
                            writeln!(stdout, "{line}").and_then(|_| stdout.flush())
                        }
                        Format::Human => output::human::write_report(&mut stdout, &report)
                            .and_then(|_| {
                                if args.members.is_empty() || report.stage < Stage::Verify {
                                    return Ok(());
                                }
                                let only = "only the members matching --member were verified";
                                writeln!(stdout, "  ({only})")
                            })
                            .and_then(|_| match rows {
                                Some(rows) if !rows.is_empty() => {
                                    output::stats::write_table(&mut stdout, rows)
                                }
                                _ => Ok(()),
                            }),
                    });
                    next += 1;
                }
                written
            }
        };
        if written.is_err() {
            return ExitCode::from(2); // stdout closed
        }
    }
    if let Some(p) = progress.as_mut() {
        p.clear(&mut stderr);
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

/// A member started or finished: a JSON line (json-stream) and the progress line.
fn member_event(
    stdout: &mut StandardStream,
    format: Format,
    file: &std::path::Path,
    index: usize,
    event: MemberEvent,
    progress: &mut Option<Progress>,
    with_stats: bool,
) -> std::io::Result<()> {
    match event {
        MemberEvent::Started { member, .. } => {
            if let Some(p) = progress.as_mut() {
                p.member_started(index, &member);
            }
            Ok(())
        }
        MemberEvent::Finished {
            member,
            kind,
            errors,
            time,
            source,
            stats,
        } => {
            if let Some(p) = progress.as_mut() {
                p.member_finished(index, &member);
            }
            if format != Format::JsonStream {
                return Ok(());
            }
            let stats = stats.as_ref().filter(|_| with_stats);
            let line =
                output::stream::render_member(file, &member, kind, &errors, time, source, stats);
            writeln!(stdout, "{line}")?;
            stdout.flush()
        }
    }
}
