//! Z3 processes end with Germanium: killed by SIGTERM, SIGINT or SIGKILL while Z3 is busy in
//! a long query, Germanium leaves no solver running (Linux: reads `/proc`).
#![cfg(target_os = "linux")]

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The pigeonhole principle for `n` pigeons in `n - 1` holes: unsatisfiable, and exponential
/// for Z3's clause learning (n = 13 keeps Z3 busy for about ten seconds).
fn pigeonhole_program(n: usize) -> String {
    let holes = n - 1;
    let var = |i: usize, j: usize| format!("p{i}_{j}");
    let params: Vec<String> = (0..n)
        .flat_map(|i| (0..holes).map(move |j| (i, j)))
        .map(|(i, j)| format!("{}: Bool", var(i, j)))
        .collect();
    let mut clauses = Vec::new();
    for i in 0..n {
        let some_hole: Vec<String> = (0..holes).map(|j| var(i, j)).collect();
        clauses.push(format!("({})", some_hole.join(" || ")));
    }
    for j in 0..holes {
        for i in 0..n {
            for k in i + 1..n {
                clauses.push(format!("!({} && {})", var(i, j), var(k, j)));
            }
        }
    }
    format!(
        "method pigeons({})\n  requires {}\n{{\n  assert false\n}}\n",
        params.join(", "),
        clauses.join(" && ")
    )
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may contain spaces, so split after the last ')'.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // A zombie has ended; only its exit status is left for its (new) parent.
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, s)| s.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn start_busy_germanium(program: &PathBuf) -> (Child, u32) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_germanium"));
    command
        .args(["verify", "--no-cache", "--timeout", "600", "--jobs", "1"])
        .arg(program)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // A test run in a shell's background job inherits SIGINT ignored; a user's Ctrl-C reaches
    // a Germanium in the foreground, with the default action, which is what is tested.
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut germanium = command.spawn().expect("the germanium binary runs");
    // Wait until Z3 has been working for a while: it is inside the long query.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(z3) = children_of(germanium.id()).first() {
            std::thread::sleep(Duration::from_millis(1500));
            if alive(*z3) {
                return (germanium, *z3);
            }
        }
        assert!(
            Instant::now() < deadline,
            "Germanium never started a solver"
        );
        if let Ok(Some(status)) = germanium.try_wait() {
            panic!("Germanium ended before the test could stop it: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_solver_ends_with_germanium(signal: &str) {
    let program = std::env::temp_dir().join(format!(
        "germanium-signal-{}-{signal}.vpr",
        std::process::id()
    ));
    std::fs::write(&program, pigeonhole_program(13)).unwrap();
    let (mut germanium, z3) = start_busy_germanium(&program);
    let sent = Command::new("kill")
        .args([format!("-{signal}"), germanium.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = germanium.wait().unwrap();
    assert!(!status.success(), "{signal}: {status}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(z3) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_file(&program);
    assert!(
        !alive(z3),
        "Z3 (pid {z3}) is still running 10 s after Germanium was killed with SIG{signal}"
    );
}

#[test]
fn sigterm_mid_query_leaves_no_solver_behind() {
    assert_solver_ends_with_germanium("TERM");
}

#[test]
fn sigint_mid_query_leaves_no_solver_behind() {
    assert_solver_ends_with_germanium("INT");
}

#[test]
fn sigkill_mid_query_leaves_no_solver_behind() {
    assert_solver_ends_with_germanium("KILL");
}
