//! The stage sequence, on its own thread, with panics turned into diagnostics.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use germanium_syntax::ast::{NodeIdGen, Program};
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, FileId, SourceMap, Span};

use crate::{FileReport, Mode, Options, Outcome, Stage};

/// Runs the pipeline on `path` and reports. Never panics (unless no thread can be spawned and
/// even the fallback fails, which would mean the process is out of memory).
pub fn run_file(path: &Path, options: &Options) -> FileReport {
    let started = Instant::now();
    if let Some(problem) = unreadable(path) {
        let mut report = internal_report(path, SourceMap::new(), problem);
        report.time = started.elapsed();
        return report;
    }
    run_guarded(path, None, options, started)
}

/// [`run_file`] on `text` as the contents of `path` (an editor's buffer, which need not be
/// saved); the files it imports are read from disk, relative to `path`.
pub fn run_text(path: &Path, text: String, options: &Options) -> FileReport {
    run_guarded(path, Some(text), options, Instant::now())
}

fn run_guarded(
    path: &Path,
    text: Option<String>,
    options: &Options,
    started: Instant,
) -> FileReport {
    let owned_path = path.to_path_buf();
    let owned_options = options.clone();
    let spawned = std::thread::Builder::new()
        .name("germanium-front-end".into())
        .stack_size(options.stack_size)
        .spawn(move || {
            guarded(&owned_path, |sources| {
                run_stages(&owned_path, text, &owned_options, sources)
            })
        });
    let mut report = match spawned {
        Ok(handle) => match handle.join() {
            Ok(report) => report,
            // `guarded` catches panics, so this is only reached if reporting the
            // panic itself panicked.
            Err(payload) => internal_failure(path, SourceMap::new(), &*payload),
        },
        Err(err) => internal_report(
            path,
            SourceMap::new(),
            format!("could not start the front-end thread: {err}"),
        ),
    };
    report.time = started.elapsed();
    report
}

/// Runs `stages`, turning a panic into an `internal` report that keeps the files loaded so far.
fn guarded(path: &Path, stages: impl FnOnce(&mut SourceMap) -> FileReport) -> FileReport {
    let mut sources = SourceMap::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| stages(&mut sources)));
    match outcome {
        Ok(report) => report,
        Err(payload) => internal_failure(path, sources, &*payload),
    }
}

/// What the stages produce; turned into a [`FileReport`] by the caller.
struct StagesDone {
    program: Program,
    diagnostics: Vec<Diagnostic>,
    stage: Stage,
}

fn run_stages(
    path: &Path,
    text: Option<String>,
    options: &Options,
    sources: &mut SourceMap,
) -> FileReport {
    let done = front_end_and_verify(path, text, options, sources);
    let result = outcome_of(&done.diagnostics);
    FileReport {
        path: path.to_path_buf(),
        result,
        diagnostics: done.diagnostics,
        sources: std::mem::take(sources),
        program: Some(done.program),
        stage: done.stage,
        backend: (done.stage == Stage::Verify).then_some(options.backend),
        cross_checked: done.stage == Stage::Verify && options.cross_check,
        time: Default::default(),
    }
}

fn front_end_and_verify(
    path: &Path,
    text: Option<String>,
    options: &Options,
    sources: &mut SourceMap,
) -> StagesDone {
    let mut ids = NodeIdGen::default();
    // Each stage runs only if the ones before found no errors; warnings are kept along.
    let imports = &options.import_paths;
    let (mut program, mut diagnostics) = match text {
        Some(text) => germanium_syntax::load_program_text(path, text, imports, sources, &mut ids),
        None => germanium_syntax::load_program(path, imports, sources, &mut ids),
    };
    if has_errors(&diagnostics) {
        return StagesDone {
            program,
            diagnostics,
            stage: Stage::Load,
        };
    }
    diagnostics.extend(germanium_syntax::expand_macros(&mut program, &mut ids));
    if has_errors(&diagnostics) {
        return StagesDone {
            program,
            diagnostics,
            stage: Stage::ExpandMacros,
        };
    }
    let rules = germanium_semantics::Rules {
        wands_in_predicates: options.combinable_wands,
    };
    let (mut semantics, mut found) =
        germanium_semantics::check_program_under(&program, ids.count(), &rules);
    if !has_errors(&found) {
        // Viper's termination plugin imports the well-founded orders the measures need.
        let imports = germanium_semantics::auto_import::termination_imports(&program, &semantics);
        if !imports.is_empty() {
            let (items, load_errors) =
                germanium_syntax::loader::load_library_files(&imports, sources, &mut ids);
            diagnostics.extend(load_errors);
            add_imported_domains(&mut program, items);
            (semantics, found) =
                germanium_semantics::check_program_under(&program, ids.count(), &rules);
        }
    }
    diagnostics.extend(found);
    if has_errors(&diagnostics) || options.mode == Mode::Check {
        return StagesDone {
            program,
            diagnostics,
            stage: Stage::Check,
        };
    }
    if let Some(problem) = &options.solver_problem {
        // No position: the problem is the solver's, not the program's.
        let nowhere = Span::new(FileId(0), 0, 0);
        diagnostics.push(Diagnostic::new(ids::INTERNAL, nowhere, problem.clone()));
        return StagesDone {
            program,
            diagnostics,
            stage: Stage::Verify,
        };
    }
    let mut verify_options = germanium_verifier::VerifyOptions {
        z3: options.z3.clone(),
        timeout: options.timeout,
        smt_log: options.smt_log.clone(),
        jobs: options.jobs,
        max_branches: options.max_branches,
        combinable_wands: options.combinable_wands,
        counterexamples: options.counterexamples,
        events: options.events.clone(),
        members: options.members.clone(),
        failed_functions: options.failed_functions.iter().flatten().cloned().collect(),
        cancel: options.cancel.clone(),
        answers: None,
        stats: options.stats,
    };
    let engine = crate::backends::Engine {
        backend: options.backend,
        cross_check: options.cross_check,
        trace: options.trace.clone(),
    };
    if options.members.is_some() && options.failed_functions.is_none() {
        let left_out = crate::backends::failing_functions_left_out(
            &program,
            &semantics,
            sources,
            &verify_options,
            &engine,
        );
        verify_options.failed_functions.extend(left_out);
    }
    // The execution log needs a run; the cache has none. Counterexamples are made where
    // the member runs: a remote run has none, so they keep the run here.
    let cache = options.cache.as_ref().filter(|_| options.trace.is_none());
    let remote = options
        .remote
        .as_ref()
        .filter(|_| options.trace.is_none() && !options.counterexamples)
        .map(|_| options);
    let start = diagnostics.len();
    diagnostics.extend(match (cache, remote) {
        (None, None) => {
            crate::backends::verify_members(&program, &semantics, sources, &verify_options, &engine)
                .diagnostics()
        }
        (cache, remote) => crate::cached::verify_through_cache(
            &program,
            &semantics,
            sources,
            &verify_options,
            &engine,
            cache,
            remote,
        ),
    });
    if options.counterexamples {
        crate::confirm::confirm(&program, &semantics, &mut diagnostics[start..]);
    }
    StagesDone {
        program,
        diagnostics,
        stage: Stage::Verify,
    }
}

/// Adds the domains of automatically imported library files (only domains, as in Viper). The
/// library's `WellFoundedOrder` replaces one the program declares; other domains the program
/// already has are kept as they are.
fn add_imported_domains(program: &mut Program, items: Vec<germanium_syntax::ast::Item>) {
    use germanium_syntax::ast::ItemKind;
    let domain_name = |item: &germanium_syntax::ast::Item| match &item.kind {
        ItemKind::Domain(d) => Some(d.name.name.clone()),
        _ => None,
    };
    let imported: Vec<_> = items
        .into_iter()
        .filter(|i| domain_name(i).is_some())
        .collect();
    if imported
        .iter()
        .any(|i| domain_name(i).as_deref() == Some("WellFoundedOrder"))
    {
        program
            .items
            .retain(|i| domain_name(i).as_deref() != Some("WellFoundedOrder"));
    }
    for item in imported {
        let name = domain_name(&item);
        if !program.items.iter().any(|i| domain_name(i) == name) {
            program.items.push(item);
        }
    }
}

fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// `Error` if any diagnostic is internal (Germanium could not finish), else `Failed` if there
/// are any, else `Verified`.
fn outcome_of(diagnostics: &[Diagnostic]) -> Outcome {
    let is_internal = |d: &Diagnostic| d.id == ids::INTERNAL || d.id.starts_with("internal:");
    if diagnostics.iter().any(is_internal) {
        Outcome::Error
    } else if !has_errors(diagnostics) {
        Outcome::Verified
    } else {
        Outcome::Failed
    }
}

fn internal_failure(
    path: &Path,
    sources: SourceMap,
    payload: &(dyn std::any::Any + Send),
) -> FileReport {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    internal_report(
        path,
        sources,
        format!("internal error (please report it): {message}"),
    )
}

/// A report of a file Germanium could not finish: one `internal` error at its start.
/// Why `path` cannot be read as a program (`-` is standard input), if it cannot.
fn unreadable(path: &Path) -> Option<String> {
    if path == Path::new(germanium_syntax::loader::STDIN) {
        return None;
    }
    match std::fs::metadata(path) {
        Err(err) => Some(format!("cannot read `{}`: {err}", path.display())),
        Ok(m) if m.is_dir() => Some(format!("`{}` is a directory", path.display())),
        Ok(_) => None,
    }
}

fn internal_report(path: &Path, mut sources: SourceMap, message: String) -> FileReport {
    let span = main_file_span(&mut sources, path);
    FileReport {
        path: path.to_path_buf(),
        result: Outcome::Error,
        diagnostics: vec![Diagnostic::new(ids::INTERNAL, span, message)],
        sources,
        program: None,
        stage: Stage::Load,
        backend: None,
        cross_checked: false,
        time: Default::default(),
    }
}

/// An empty span at the start of the main file, adding an empty entry for it to `sources`
/// if loading never got that far.
fn main_file_span(sources: &mut SourceMap, path: &Path) -> Span {
    let first = sources.files().next().map(|(id, _)| id);
    let file = first.unwrap_or_else(|| sources.add(PathBuf::from(path), String::new()));
    debug_assert_eq!(file, FileId(0));
    Span::new(file, 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_prefers_error_over_failed() {
        let span = Span::default();
        let parse = Diagnostic::parser(span, "x");
        let unsupported = Diagnostic::new(ids::UNSUPPORTED, span, "x");
        assert_eq!(outcome_of(&[]), Outcome::Verified);
        assert_eq!(outcome_of(std::slice::from_ref(&parse)), Outcome::Failed);
        assert_eq!(outcome_of(&[parse, unsupported]), Outcome::Error);
    }

    #[test]
    fn a_file_that_cannot_be_read_is_an_internal_error_naming_it() {
        for path in ["/nonexistent/germanium/x.vpr", "/"] {
            let report = run_file(Path::new(path), &Options::new(Mode::Check));
            assert_eq!(report.result, Outcome::Error, "{path}");
            assert_eq!(report.diagnostics.len(), 1);
            assert_eq!(report.diagnostics[0].id, ids::INTERNAL);
            assert!(report.diagnostics[0].message.contains(path), "{path}");
            assert_eq!(report.sources.start(report.diagnostics[0].span).line, 1);
        }
    }

    #[test]
    fn a_panic_becomes_an_internal_error_with_the_sources_kept() {
        let mut sources = SourceMap::new();
        sources.add("main.vpr".into(), "method m()".into());
        let payload: Box<dyn std::any::Any + Send> = Box::new("boom");
        let report = internal_failure(Path::new("main.vpr"), sources, &*payload);
        assert_eq!(report.result, Outcome::Error);
        assert_eq!(report.diagnostics[0].id, "internal");
        assert!(report.diagnostics[0].message.contains("boom"));
        assert_eq!(report.sources.files().count(), 1);
    }

    #[test]
    fn panics_in_a_stage_are_caught_and_keep_the_sources() {
        let report = guarded(Path::new("x.vpr"), |sources| {
            sources.add("x.vpr".into(), "method m() {}".into());
            panic!("stage failed")
        });
        assert_eq!(report.result, Outcome::Error);
        assert!(report.diagnostics[0].message.contains("stage failed"));
        assert_eq!(report.sources.get(FileId(0)).text, "method m() {}");
    }

    #[test]
    fn the_front_end_thread_has_a_large_stack() {
        fn depth(n: u64) -> u64 {
            let pad = [n; 64];
            if n == 0 {
                0
            } else {
                1 + depth(std::hint::black_box(pad)[0] - 1)
            }
        }
        // ~600 bytes per frame * 100k frames: far beyond the 8 MiB default, within 256 MiB.
        let handle = std::thread::Builder::new()
            .stack_size(crate::DEFAULT_STACK_SIZE)
            .spawn(|| depth(100_000))
            .unwrap();
        assert_eq!(handle.join().unwrap(), 100_000);
    }

    #[test]
    fn every_standard_library_file_checks_cleanly() {
        let dir = std::env::temp_dir().join(format!("germanium-driver-std-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for library_file in germanium_syntax::loader::stdlib::paths() {
            let main = dir.join("main.vpr");
            std::fs::write(&main, format!("import <{library_file}>\n")).unwrap();
            let report = run_file(&main, &Options::new(Mode::Check));
            assert_eq!(
                report.result,
                Outcome::Verified,
                "{library_file}: {:?}",
                report.diagnostics
            );
        }
        // Bound variables of the library must not clash with a program's own names.
        let main = dir.join("clash.vpr");
        std::fs::write(
            &main,
            "import <decreases/all.vpr>\nfunction i(): Int\nfield s: Int\n",
        )
        .unwrap();
        let report = run_file(&main, &Options::new(Mode::Check));
        assert_eq!(report.result, Outcome::Verified, "{:?}", report.diagnostics);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
