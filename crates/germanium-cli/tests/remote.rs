//! Verification on a real Remote Execution API cluster: BuildGrid with PostgreSQL and the
//! test workers of `tests/remote/`, started and stopped by each test (`cluster.py`). These
//! tests need the buildgrid venv and PostgreSQL, which `scripts/remote-test` installs; it
//! runs them with `--ignored` (`scripts/test` runs it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{file_verdicts as verdicts, json_lines, member_verdicts};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of the buildgrid venv.
fn python() -> PathBuf {
    let path = std::env::var_os("GERMANIUM_BUILDGRID_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".tools/buildgrid/bin/python"));
    assert!(
        path.exists(),
        "{} is missing: scripts/remote-test installs it",
        path.display()
    );
    path
}

/// A private cluster under a temporary directory, stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
}

impl Cluster {
    fn up(workers: usize) -> Cluster {
        Cluster::up_named(workers, "")
    }

    /// A cluster whose one instance is named `instance`.
    fn up_named(workers: usize, instance: &str) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new(python())
            .arg(workspace().join("tests/remote/cluster.py"))
            .args([
                "up",
                dir.path().to_str().unwrap(),
                "--instance",
                instance,
                "--workers",
            ])
            .arg(workers.to_string())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "the cluster did not start");
        Cluster { dir }
    }

    fn state(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.dir.path().join("cluster.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn url(&self) -> String {
        self.state()["url"].as_str().unwrap().to_string()
    }

    fn pid(value: &serde_json::Value) -> i32 {
        value.as_i64().unwrap() as i32
    }

    fn add_worker(&self) {
        let status = Command::new(python())
            .arg(workspace().join("tests/remote/cluster.py"))
            .args(["worker", self.dir.path().to_str().unwrap()])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits until some worker's log says it started a lease.
    fn wait_for_a_lease(&self, within: Duration) {
        let started = Instant::now();
        while started.elapsed() < within {
            let busy = std::fs::read_dir(self.dir.path()).unwrap().any(|e| {
                let path = e.unwrap().path();
                path.extension().is_some_and(|x| x == "log")
                    && path
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("worker-")
                    && std::fs::read_to_string(&path)
                        .unwrap_or_default()
                        .contains("started")
            });
            if busy {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("no worker started a lease within {within:?}");
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(python())
            .arg(workspace().join("tests/remote/cluster.py"))
            .args(["down", self.dir.path().to_str().unwrap()])
            .status();
    }
}

fn kill(pid: i32, signal: &str) {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
}

/// `germanium verify ARGS` with the result cache at `cache` (a client of its own).
fn germanium(args: &[&str], cache: &Path) -> Output {
    spawn(args, cache).wait_with_output().unwrap()
}

fn spawn(args: &[&str], cache: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_germanium"))
        .arg("verify")
        .args(args)
        .current_dir(workspace())
        .env("GERMANIUM_CACHE_DIR", cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Each member's result source, from `json-stream` output.
fn sources(output: &Output) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = json_lines(output)
        .iter()
        .filter(|l| l["event"] == "member")
        .map(|l| {
            (
                l["member"].as_str().unwrap().to_string(),
                l["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Every 50th file of the corpus's pass list (passing files with and without errors).
fn corpus_sample() -> Vec<String> {
    let list =
        std::fs::read_to_string(workspace().join("tests/corpus/verify-passing.txt")).unwrap();
    list.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .step_by(50)
        .map(|l| format!("../shared/{}", l.trim()))
        .collect()
}

#[test]
#[ignore = "needs the test cluster (scripts/remote-test)"]
fn verdicts_through_the_cluster_equal_local_verdicts() {
    let cluster = Cluster::up(2);
    let url = cluster.url();
    let files = corpus_sample();
    assert!(files.len() >= 20);
    let cache = tempfile::tempdir().unwrap();
    let mut local_args = vec!["--no-cache", "--format", "json-stream"];
    local_args.extend(files.iter().map(|f| f.as_str()));
    let local = germanium(&local_args, cache.path());
    let mut remote_args = vec![
        "--no-cache",
        "--format",
        "json-stream",
        "--remote-executor",
        &url,
    ];
    remote_args.extend(files.iter().map(|f| f.as_str()));
    let remote = germanium(&remote_args, cache.path());
    assert_eq!(member_verdicts(&local), member_verdicts(&remote));
    assert!(sources(&remote).iter().all(|(_, s)| s == "remote"));
    let (local, remote) = (verdicts(&local), verdicts(&remote));
    assert_eq!(local.len(), files.len());
    assert_eq!(local, remote);
    // Both verdicts occur in the sample.
    assert!(local.iter().any(|(_, r, _)| r == "verified"));
    assert!(local.iter().any(|(_, r, _)| r == "failed"));
}

#[test]
#[ignore = "needs the test cluster (scripts/remote-test)"]
fn a_second_client_gets_every_result_from_the_action_cache_and_an_edit_runs_one_member() {
    // A named instance: every request, ByteStream's resource names included, carries it.
    let cluster = Cluster::up_named(2, "germanium/ci");
    let url = cluster.url();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("p.vpr");
    let text = "field f: Int\n\
        function get(x: Ref): Int requires acc(x.f) { x.f }\n\
        method set(x: Ref, v: Int) requires acc(x.f) ensures acc(x.f) && get(x) == v { x.f := v }\n\
        method twice(x: Ref) requires acc(x.f) ensures acc(x.f) { set(x, 1); set(x, 2); assert get(x) == 2 }\n\
        method wrong(x: Ref) requires acc(x.f) { x.f := 3; assert x.f == 4 }\n\
        method other(y: Int) { assert y + 1 > y }\n";
    std::fs::write(&program, text).unwrap();
    let path = program.to_str().unwrap();
    let args = [
        "--format",
        "json-stream",
        "--remote-executor",
        &url,
        "--remote-instance",
        "germanium/ci",
        path,
    ];
    let first = germanium(&args, tempfile::tempdir().unwrap().path());
    assert_eq!(first.status.code(), Some(1), "{first:?}");
    assert!(
        sources(&first).iter().all(|(_, s)| s == "remote"),
        "{:?}",
        sources(&first)
    );
    // A second client, its local cache empty.
    let second = germanium(&args, tempfile::tempdir().unwrap().path());
    assert_eq!(verdicts(&first), verdicts(&second));
    let got = sources(&second);
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(|(_, s)| s == "remote-cache"), "{got:?}");
    // One method's body edited: that method is executed again, and no other.
    std::fs::write(
        &program,
        text.replace("assert y + 1 > y", "assert y + 2 > y"),
    )
    .unwrap();
    let third = germanium(&args, tempfile::tempdir().unwrap().path());
    let got = sources(&third);
    for (member, source) in &got {
        let expected = if member == "other" {
            "remote"
        } else {
            "remote-cache"
        };
        assert_eq!(source, expected, "{member}: {got:?}");
    }
    // The local cache in front of the cluster: a client's own second run asks nothing.
    let own = tempfile::tempdir().unwrap();
    germanium(&args, own.path());
    let again = germanium(&args, own.path());
    assert!(sources(&again).iter().all(|(_, s)| s == "local-cache"));
}

#[test]
#[ignore = "needs the test cluster (scripts/remote-test)"]
fn a_cache_without_execution_shares_what_clients_verified() {
    let cluster = Cluster::up(0);
    let url = cluster.url();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("q.vpr");
    std::fs::write(
        &program,
        "method a(x: Int) { assert x * 0 == 0 }\nmethod b(x: Int) { assert x > 0 }\n",
    )
    .unwrap();
    let args = [
        "--format",
        "json-stream",
        "--remote-cache",
        &url,
        program.to_str().unwrap(),
    ];
    let first = germanium(&args, tempfile::tempdir().unwrap().path());
    assert_eq!(first.status.code(), Some(1), "{first:?}");
    assert_eq!(
        sources(&first),
        [
            ("a".to_string(), "local".to_string()),
            ("b".to_string(), "local".to_string())
        ]
    );
    let second = germanium(&args, tempfile::tempdir().unwrap().path());
    assert_eq!(verdicts(&first), verdicts(&second));
    assert_eq!(
        sources(&second),
        [
            ("a".to_string(), "remote-cache".to_string()),
            ("b".to_string(), "remote-cache".to_string())
        ]
    );
}

/// A file with a member that takes seconds, so that the cluster can be disturbed mid-action.
const SLOW: &str = "../shared/viper-tests/quantifiedpermissions/sequences/parallel_max.vpr";

/// A client verifying [`SLOW`] on `cluster` (with `extra` options), once a worker has started
/// one of its actions.
fn slow_client(cluster: &Cluster, cache: &Path, extra: &[&str]) -> Child {
    let url = cluster.url();
    let mut args = vec!["--no-cache", "--format", "json", "--remote-executor", &url];
    args.extend(extra);
    args.push(SLOW);
    let client = spawn(&args, cache);
    cluster.wait_for_a_lease(Duration::from_secs(60));
    client
}

/// `SLOW` verified here.
fn slow_locally() -> Output {
    germanium(
        &["--no-cache", "--format", "json", SLOW],
        tempfile::tempdir().unwrap().path(),
    )
}

#[test]
#[ignore = "needs the test cluster (scripts/remote-test)"]
fn a_worker_killed_mid_action_changes_no_result() {
    let cluster = Cluster::up(1);
    let local = slow_locally();
    let cache = tempfile::tempdir().unwrap();
    let client = slow_client(&cluster, cache.path(), &[]);
    let worker = Cluster::pid(&cluster.state()["workers"][0]);
    kill(worker, "-KILL");
    cluster.add_worker();
    let remote = client.wait_with_output().unwrap();
    assert_eq!(
        verdicts(&local),
        verdicts(&remote),
        "{}",
        String::from_utf8_lossy(&remote.stderr)
    );
    assert_eq!(local.status.code(), remote.status.code());
    assert!(
        cluster.log("worker-1.log").contains("started"),
        "the new worker ran the action again"
    );
}

#[test]
#[ignore = "needs the test cluster (scripts/remote-test)"]
fn the_server_stopped_mid_run_is_a_clear_error_or_a_local_run() {
    for fallback in ["error", "local"] {
        let cluster = Cluster::up(1);
        let cache = tempfile::tempdir().unwrap();
        let client = slow_client(&cluster, cache.path(), &["--remote-fallback", fallback]);
        let stopped = Instant::now();
        kill(Cluster::pid(&cluster.state()["server"]), "-KILL");
        let output = client.wait_with_output().unwrap();
        let waited = stopped.elapsed();
        let lines = json_lines(&output);
        let errors = lines[0]["errors"].as_array().unwrap();
        if fallback == "error" {
            assert_eq!(output.status.code(), Some(2), "{output:?}");
            assert!(
                errors.iter().any(|e| e["id"] == "internal"
                    && e["message"].as_str().unwrap().contains("cannot be reached")),
                "{errors:?}"
            );
            assert!(
                waited < Duration::from_secs(30),
                "the error took {waited:?}"
            );
        } else {
            let local = slow_locally();
            assert_eq!(verdicts(&local), verdicts(&output));
            assert_eq!(output.status.code(), local.status.code());
            assert!(
                errors.iter().any(|e| e["id"] == "remote.fallback"),
                "{errors:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs the test cluster (scripts/remote-test)"]
fn ctrl_c_cancels_the_clusters_operations() {
    let cluster = Cluster::up(1);
    let cache = tempfile::tempdir().unwrap();
    let client = slow_client(&cluster, cache.path(), &[]);
    let interrupted = Instant::now();
    kill(client.id() as i32, "-INT");
    let output = client.wait_with_output().unwrap();
    assert!(interrupted.elapsed() < Duration::from_secs(10));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let message = json_lines(&output)[0]["errors"].to_string();
    assert!(message.contains("cancelled"), "{message}");
    // The server withdraws the lease from the worker, which kills the action.
    let started = Instant::now();
    while !cluster.log("worker-0.log").contains("withdrawn") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}",
            cluster.log("worker-0.log")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
