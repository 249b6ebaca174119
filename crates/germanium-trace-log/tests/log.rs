//! The execution log written for real programs: its tree, states and failures, and the
//! index that reads it back.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use germanium_driver::{run_file, FileReport, Mode, Options};
use germanium_trace_log::{read_all, Index, Line, Writer};

const PROGRAM: &str = "field f: Int
field next: Ref

method m(x: Ref, y: Ref, n: Int)
  requires acc(x.f) && acc(x.next) && acc(y.f)
  requires x.next == y
{
  x.f := n
  if (n > 0) {
    y.f := 3
  } else {
    y.f := 4
    y.f := y.f + n
  }
  assert x.f + y.f > 5
}

method ok(x: Ref)
  requires acc(x.f)
  ensures acc(x.f) && x.f == 2
{
  x.f := 2
}
";

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("germanium-log-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn errors(report: &FileReport) -> Vec<(u32, String)> {
    report
        .diagnostics
        .iter()
        .map(|d| (report.sources.start(d.span).line, d.id.clone()))
        .collect()
}

fn traced(file: &Path, log: &Path, jobs: usize) -> FileReport {
    let writer = Writer::create(log).unwrap();
    let mut options = Options::new(Mode::Verify);
    options.jobs = jobs;
    options.trace = Some(writer.sinks());
    let report = run_file(file, &options);
    writer.finish().unwrap();
    report
}

#[test]
fn the_log_is_a_tree_of_steps_with_states_and_failures_and_changes_no_result() {
    let dir = Dir::new("tree");
    let file = dir.0.join("p.vpr");
    std::fs::write(&file, PROGRAM).unwrap();
    let log = dir.0.join("p.jsonl");
    let plain = run_file(&file, &Options::new(Mode::Verify));
    let report = traced(&file, &log, 2);
    assert_eq!(errors(&plain), errors(&report));
    assert_eq!(
        errors(&plain),
        [(15, "assert.failed:assertion.false".into())]
    );

    let lines = read_all(&log).unwrap();
    assert_eq!(lines[0], Line::Log { version: 1 });
    let (mut facts, mut states, mut records) = (HashSet::new(), HashSet::new(), HashMap::new());
    let mut steps = HashSet::new();
    let mut failures = Vec::new();
    for line in &lines {
        match line {
            Line::Log { .. } => {}
            Line::Fact(f) => assert!(facts.insert(f.id)),
            Line::State(s) => {
                // Every fact a state lists was given before it.
                assert!(s.path.iter().all(|f| facts.contains(f)), "{s:?}");
                assert!(states.insert(s.id));
            }
            Line::Record(r) => {
                // Parents and states come before the records that name them.
                if let Some(p) = r.parent {
                    assert_eq!(records.get(&p), Some(&r.member), "{r:?}");
                }
                assert!(r.state.is_none_or(|s| states.contains(&s)), "{r:?}");
                steps.insert(r.step.clone());
                records.insert(r.id, r.member.clone());
            }
            Line::Failure(f) => failures.push(f.clone()),
        }
    }
    for step in [
        "member", "evaluate", "produce", "consume", "execute", "branch",
    ] {
        assert!(steps.contains(step), "no {step} record");
    }
    assert_eq!(failures.len(), 1);
    let failure = &failures[0];
    assert_eq!(failure.error, "assert.failed:assertion.false");
    assert_eq!(failure.member, "m");
    assert_eq!(failure.place.as_ref().map(|p| p.line), Some(15));
    assert!(failure
        .query
        .as_deref()
        .is_some_and(|q| q.starts_with("(not")));

    // Read back through the index: members, the failed record and its state.
    let index = Index::open(&log).unwrap();
    let names: Vec<_> = index.members().iter().map(|m| m.name.as_str()).collect();
    assert!(names.contains(&"m") && names.contains(&"ok"), "{names:?}");
    let m = index.members().iter().find(|m| m.name == "m").unwrap();
    assert_eq!(m.failures, 1);
    let ok = index.members().iter().find(|m| m.name == "ok").unwrap();
    assert_eq!(ok.failures, 0);
    let failed = index.failed_records()[0];
    let record = index.record(failed).unwrap().unwrap();
    assert_eq!(record.place.as_ref().map(|p| p.line), Some(15));
    let state = index.state(record.state.unwrap()).unwrap().unwrap();
    let vars: Vec<_> = state.store.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(vars, ["x", "y", "n"]);
    let fields: Vec<_> = state.heap.iter().map(|c| c.name.as_str()).collect();
    assert!(
        fields.contains(&"f") && fields.contains(&"next"),
        "{fields:?}"
    );
    assert!(index.fact(state.path[0]).unwrap().is_some());
    assert_eq!(index.failures(failed).unwrap()[0].error, failure.error);

    // Next and previous walk the member's tree in pre-order, each undoing the other.
    let mut at = m.root;
    let mut walked = 1;
    while let Some(next) = index.next(at) {
        assert_eq!(index.previous(next), Some(at));
        at = next;
        walked += 1;
    }
    let in_member = records.values().filter(|member| *member == "m").count();
    assert_eq!(walked, in_member);
    // Both sides of the `if` are in the log.
    let branches = lines
        .iter()
        .filter(|l| matches!(l, Line::Record(r) if r.step == "branch" && r.member == "m" && r.place.as_ref().is_some_and(|p| p.line == 9)))
        .count();
    assert!(branches >= 2, "{branches} branch records at the `if`");
}

#[test]
fn a_log_that_cannot_be_written_is_an_error_not_a_panic() {
    assert!(Writer::create(Path::new("/nonexistent-dir/x.jsonl")).is_err());
}
