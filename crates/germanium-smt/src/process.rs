//! A Z3 child process spoken to over pipes.
//!
//! A reader thread cuts stdout into complete answers (see [`crate::sexpr::Framer`]) and
//! hands them over a channel, so the owner can wait with a deadline: a wedged or crashed
//! process shows up as a timeout or a closed channel, never as a hang. A second thread
//! keeps the tail of stderr for error messages. Dropping the process kills it.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::config::Cancel;
use crate::error::SolverError;
use crate::sexpr::Framer;

/// How much of stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;

pub(crate) struct Z3Process {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    answers: Receiver<Answer>,
    stderr_tail: Arc<Mutex<StderrTail>>,
    exited: bool,
}

#[derive(Default)]
struct StderrTail {
    text: String,
    /// The reader saw end of file: `text` is complete.
    closed: bool,
}

enum Answer {
    Item(String),
    /// stdout reached end of file or failed.
    Closed(String),
}

pub(crate) enum ReceiveError {
    /// Nothing complete arrived within the guard.
    Timeout,
    /// The process closed its output; the detail says why if known.
    Closed(String),
    /// The run was cancelled while waiting.
    Cancelled,
}

/// How often a wait looks at its cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

impl Z3Process {
    /// Starts `path -smt2 -in ARGS`.
    pub(crate) fn spawn(path: &Path, args: &[String]) -> Result<Z3Process, SolverError> {
        let mut command = Command::new(path);
        command
            .arg("-smt2")
            .arg("-in")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|source| SolverError::Spawn {
            path: path.to_path_buf(),
            source,
        })?;
        let missing = |what: &str| SolverError::Spawn {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("no {what} pipe")),
        };
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
        let pid = child.id();

        let (sender, answers) = mpsc::channel();
        let spawned = thread::Builder::new()
            .name(format!("z3-{pid}-stdout"))
            .spawn(move || read_answers(stdout, sender));
        if let Err(source) = spawned {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SolverError::Spawn {
                path: path.to_path_buf(),
                source,
            });
        }
        let stderr_tail = Arc::new(Mutex::new(StderrTail::default()));
        let tail = Arc::clone(&stderr_tail);
        // Without the stderr reader Z3 could block on a full pipe; losing it only loses
        // diagnostics, so a failure to start it is ignored.
        let _ = thread::Builder::new()
            .name(format!("z3-{pid}-stderr"))
            .spawn(move || keep_tail(stderr, tail));

        Ok(Z3Process {
            child,
            stdin: BufWriter::new(stdin),
            answers,
            stderr_tail,
            exited: false,
        })
    }

    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line of input.
    pub(crate) fn send(&mut self, line: &str) -> std::io::Result<()> {
        self.send_buffered(line)?;
        self.stdin.flush()
    }

    /// Queues one line of input; [`Z3Process::flush`] sends what is queued. (The reader
    /// thread drains Z3's answers meanwhile, so Z3 never blocks while we write.)
    pub(crate) fn send_buffered(&mut self, line: &str) -> std::io::Result<()> {
        self.stdin.write_all(line.as_bytes())?;
        self.stdin.write_all(b"\n")
    }

    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        self.stdin.flush()
    }

    /// Waits for the next complete answer, at most `guard` (forever if `None`), and only
    /// until `cancel` is set.
    pub(crate) fn receive(
        &mut self,
        guard: Option<Duration>,
        cancel: Option<&Cancel>,
    ) -> Result<String, ReceiveError> {
        let deadline = guard.map(|limit| Instant::now() + limit);
        let answer = loop {
            let slice = match (deadline, cancel) {
                (Some(deadline), Some(_)) => {
                    CANCEL_POLL.min(deadline.saturating_duration_since(Instant::now()))
                }
                (Some(deadline), None) => deadline.saturating_duration_since(Instant::now()),
                (None, Some(_)) => CANCEL_POLL,
                (None, None) => {
                    break self
                        .answers
                        .recv()
                        .map_err(|_| ReceiveError::Closed("output closed".into()))?
                }
            };
            match self.answers.recv_timeout(slice) {
                Ok(answer) => break answer,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ReceiveError::Closed("output closed".into()))
                }
                Err(RecvTimeoutError::Timeout) => {
                    if cancel.is_some_and(Cancel::is_cancelled) {
                        return Err(ReceiveError::Cancelled);
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(ReceiveError::Timeout);
                    }
                }
            }
        };
        match answer {
            Answer::Item(text) => Ok(text),
            Answer::Closed(why) => Err(ReceiveError::Closed(why)),
        }
    }

    /// Why the process is gone: exit status (waiting up to a second for it) and the end of
    /// stderr.
    pub(crate) fn exit_detail(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.exited = true;
                    break format!("exited with {status}");
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                Ok(None) => break "still running".to_string(),
                Err(e) => break format!("status unknown ({e})"),
            }
        };
        // Once the process is gone its stderr closes soon; give the reader a moment so the
        // last words (often the reason for the exit) are included.
        let deadline = Instant::now() + Duration::from_millis(200);
        let stderr = loop {
            let (text, closed) = match self.stderr_tail.lock() {
                Ok(tail) => (tail.text.trim().to_string(), tail.closed),
                Err(_) => (String::new(), true),
            };
            if closed || !self.exited || Instant::now() >= deadline {
                break text;
            }
            thread::sleep(Duration::from_millis(5));
        };
        if stderr.is_empty() {
            status
        } else {
            format!("{status}; stderr: {stderr}")
        }
    }

    /// Kills the process and reaps it.
    pub(crate) fn kill(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
            self.exited = true;
        }
    }
}

impl Drop for Z3Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Makes the child die when the thread that starts it ends, and so when Germanium ends in
/// any way (a signal such as SIGTERM or SIGKILL, a panic, `exit`): Z3 may be busy in a long
/// query and not notice that its input closed. Each solver is started and dropped on the
/// thread that uses it, so the thread's end never comes first.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only makes async-signal-safe system calls.
    let parent = unsafe { libc::getpid() };
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the call above took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

fn read_answers(stdout: impl Read, sender: mpsc::Sender<Answer>) {
    let mut reader = BufReader::new(stdout);
    let mut framer = Framer::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let closed = match reader.read_until(b'\n', &mut line) {
            Ok(0) => Some("end of output".to_string()),
            Ok(_) => None,
            Err(e) => Some(format!("read error: {e}")),
        };
        if let Some(why) = closed {
            let _ = sender.send(Answer::Closed(why));
            return;
        }
        framer.push(&String::from_utf8_lossy(&line));
        while let Some(item) = framer.next_item() {
            if sender.send(Answer::Item(item)).is_err() {
                return; // The owner is gone.
            }
        }
    }
}

fn keep_tail(stderr: impl Read, tail: Arc<Mutex<StderrTail>>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    while matches!(reader.read_until(b'\n', &mut line), Ok(n) if n > 0) {
        if let Ok(mut kept) = tail.lock() {
            kept.text.push_str(&String::from_utf8_lossy(&line));
            if kept.text.len() > STDERR_TAIL {
                let mut cut = kept.text.len() - STDERR_TAIL;
                while !kept.text.is_char_boundary(cut) {
                    cut += 1;
                }
                kept.text.drain(..cut);
            }
        }
        line.clear();
    }
    if let Ok(mut kept) = tail.lock() {
        kept.closed = true;
    }
}
