//! Running jobs: a program text and the members to verify in it, each job a program of its
//! own. What `germanium action` runs on a worker, and what runs here for a cache without
//! executor or an unreachable cluster with `--remote-fallback local`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use germanium_cache::{MemberKey, Slice};
use germanium_remote::protocol::{JobDiagnostic, JobResult, Manifest, Results};
use germanium_remote::JobInput as Job;
use germanium_syntax::ast::ItemKind;
use germanium_syntax::{Severity, Span};
use germanium_verifier::{MemberEvent, MemberEvents, MemberFilter};

use crate::Options;

/// The job verifying one member alone in its slice: the functions the slice leaves without
/// a body untrusted when it is a function (functions are verified before any postcondition
/// of a function with a body is trusted), else those that failed in the program (`failed`).
pub fn slice_job(key: &MemberKey, slice: &Slice, failed: &[String]) -> Job {
    Job {
        members: vec![key.name.clone()],
        text: slice.text.clone(),
        failed_functions: if key.kind == "function" {
            slice.bodiless_functions.iter().cloned().collect()
        } else {
            failed.to_vec()
        },
    }
}

/// Verifies each job as a program of its own, nothing stored, and gives one result per
/// member, job after job in order. One job gets `options.jobs` worker threads; several run
/// `options.jobs` at a time, each on one.
pub fn run_jobs(jobs: &[Job], options: &Options) -> Vec<JobResult> {
    let threads_per_job = if jobs.len() == 1 { options.jobs } else { 1 };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<OnceLock<Vec<JobResult>>> = jobs.iter().map(|_| OnceLock::new()).collect();
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(i) else {
                    break;
                };
                let _ = results[i].set(run_job(i, job, options, threads_per_job));
            });
        }
    });
    results
        .into_iter()
        .flat_map(|r| r.into_inner().expect("every job ran"))
        .collect()
}

/// One job: its members' results, each with the diagnostics inside its declaration and those
/// inside none of the job's members.
fn run_job(i: usize, job: &Job, options: &Options, threads: usize) -> Vec<JobResult> {
    let mut opts = options.clone();
    let keep: HashSet<String> = job.members.iter().cloned().collect();
    opts.members = Some(MemberFilter(Arc::new(move |name: &str| {
        keep.contains(name)
    })));
    opts.failed_functions = Some(
        job.failed_functions
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
    );
    opts.cache = None;
    opts.remote = None;
    opts.counterexamples = false;
    opts.trace = None;
    opts.jobs = threads.max(1);
    let times: Arc<Mutex<HashMap<String, Duration>>> = Arc::default();
    let seen = times.clone();
    opts.events = Some(MemberEvents(Arc::new(move |event| {
        if let MemberEvent::Finished { member, time, .. } = event {
            seen.lock().unwrap().insert(member, time);
        }
    })));
    let path = PathBuf::from(format!("job-{i}.vpr"));
    let report = crate::run_text(&path, job.text.clone(), &opts);
    let main = report.sources.find(&path);
    // Each member's whole declaration in the job's text.
    let spans: HashMap<&str, Span> = report
        .program
        .iter()
        .flat_map(|p| &p.items)
        .filter_map(|item| {
            let name = match &item.kind {
                ItemKind::Method(m) => &m.name.name,
                ItemKind::Function(f) => &f.name.name,
                ItemKind::Predicate(p) => &p.name.name,
                _ => return None,
            };
            Some((name.as_str(), item.span))
        })
        .collect();
    let owner = |span: Span| {
        job.members.iter().find(|m| {
            spans
                .get(m.as_str())
                .is_some_and(|s| s.file == span.file && s.start <= span.start && span.end <= s.end)
        })
    };
    let times = times.lock().unwrap();
    job.members
        .iter()
        .map(|member| JobResult {
            member: member.clone(),
            diagnostics: report
                .diagnostics
                .iter()
                .filter(|d| owner(d.span).is_none_or(|m| m == member))
                .map(|d| JobDiagnostic {
                    id: d.id.clone(),
                    message: d.message.clone(),
                    warning: d.severity == Severity::Warning,
                    // `Span::default()` is no place (a solver's error, say).
                    span: (Some(d.span.file) == main && d.span.end > 0)
                        .then_some((d.span.start, d.span.end)),
                })
                .collect(),
            time_ms: times.get(member).map_or(0, |t| t.as_millis() as u64),
        })
        .collect()
}

/// `germanium action`: the jobs of the manifest in `dir`, their programs read from there.
pub fn run_action(dir: &Path, manifest: &Manifest, options: &Options) -> Result<Results, String> {
    let mut jobs = Vec::new();
    for job in &manifest.jobs {
        let path = dir.join(&job.file);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        jobs.push(Job {
            members: job.members.clone(),
            text,
            failed_functions: job.failed_functions.clone(),
        });
    }
    Ok(Results {
        results: run_jobs(&jobs, options),
    })
}
