//! The driver for an editor: verifying a buffer's text in place of the file on disk, and
//! runs cancelled before or while they verify, which never count as verified.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use germanium_driver::{run_text, Cancel, MemberEvent, MemberEvents, Mode, Options, Outcome};

const FAILING: &str = "method m(x: Int) { assert x > 0 }\n";

#[test]
fn the_text_given_is_verified_not_the_file_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.vpr");
    std::fs::write(&path, "method m() { assert true }\n").unwrap();
    std::fs::write(dir.path().join("lib.vpr"), "field f: Int\n").unwrap();
    let text = format!("import \"lib.vpr\"\n{FAILING}method n(r: Ref) requires acc(r.f) {{}}\n");
    let report = run_text(&path, text, &Options::new(Mode::Verify));
    assert_eq!(report.result, Outcome::Failed, "{:?}", report.diagnostics);
    let ids: Vec<_> = report.diagnostics.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["assert.failed:assertion.false"]);
    let at = report.sources.start(report.diagnostics[0].span);
    assert_eq!(
        (
            at.line,
            report
                .sources
                .get(report.diagnostics[0].span.file)
                .path
                .clone()
        ),
        (2, path)
    );
}

#[test]
fn a_run_cancelled_before_it_starts_verifies_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.vpr");
    let started = Arc::new(Mutex::new(0));
    let count = Arc::clone(&started);
    let mut options = Options::new(Mode::Verify);
    let cancel = Cancel::new();
    cancel.cancel();
    options.cancel = Some(cancel);
    options.events = Some(MemberEvents(Arc::new(move |e| {
        if let MemberEvent::Started { .. } = e {
            *count.lock().unwrap() += 1;
        }
    })));
    let report = run_text(&path, "method m() { assert true }\n".into(), &options);
    assert_eq!(report.result, Outcome::Error);
    assert!(report.diagnostics[0].message.contains("cancelled"));
    assert_eq!(*started.lock().unwrap(), 0);
}

/// A program whose one assertion Z3 works on for minutes.
const PIGEONHOLE: &str = include_str!("../../../tests/programs/pigeonhole.vpr");

/// A member whose one query takes Z3 minutes is stopped soon after the run is cancelled.
#[test]
fn a_run_cancelled_while_the_solver_works_stops_soon() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.vpr");
    let mut options = Options::new(Mode::Verify);
    options.timeout = Some(Duration::from_secs(1000));
    let cancel = Cancel::new();
    options.cancel = Some(cancel.clone());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        cancel.cancel();
    });
    let report = run_text(&path, PIGEONHOLE.to_string(), &options);
    canceller.join().unwrap();
    assert_eq!(report.result, Outcome::Error, "{:?}", report.diagnostics);
    assert!(report
        .diagnostics
        .iter()
        .any(|d| d.message.contains("cancelled")));
    // Generous for a busy machine; without cancellation the query runs for minutes.
    assert!(
        report.time < Duration::from_secs(30),
        "took {:?}",
        report.time
    );
}
