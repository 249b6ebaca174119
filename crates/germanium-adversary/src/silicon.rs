//! Viper's Silicon as a fourth oracle, for campaigns run by hand (never in CI): its jar
//! (PyPI's `nagini` wheel ships one; `bench/run --silicon` installs it into `.tools/nagini`)
//! run on each program with Germanium's Z3. Silicon's command line prints no error ids, only
//! messages and positions, so its verdict per member is "verified" or "failed".

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How Silicon is run.
#[derive(Clone, Debug)]
pub struct Silicon {
    pub jar: PathBuf,
    pub z3: PathBuf,
    /// Wall-clock limit of one run (Silicon's own budgets are in time too).
    pub limit: Duration,
}

/// Silicon's answer on a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Verified,
    /// The lines of its errors.
    Failed(Vec<u32>),
    /// No answer (a crash, the limit, output not understood).
    None(String),
}

impl Silicon {
    /// Silicon's answer on `text` (written to a scratch file).
    pub fn run(&self, text: &str) -> Answer {
        let dir = std::env::temp_dir().join(format!("germanium-adversary-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_err() {
            return Answer::None("no scratch directory".into());
        }
        let file = dir.join("program.vpr");
        if std::fs::write(&file, text).is_err() {
            return Answer::None("cannot write the program".into());
        }
        let child = Command::new("java")
            .arg("-Xss128m")
            .arg("-jar")
            .arg(&self.jar)
            .arg("--z3Exe")
            .arg(&self.z3)
            .arg(&file)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            return Answer::None("cannot start java".into());
        };
        // Read as it comes, so a long output never blocks Silicon.
        let reader = child.stdout.take().map(|mut stdout| {
            std::thread::spawn(move || {
                let mut out = String::new();
                let _ = stdout.read_to_string(&mut out);
                out
            })
        });
        let started = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if started.elapsed() < self.limit => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Answer::None("Silicon ran out of time".into());
                }
            }
        }
        let out = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        parse(&out, &file)
    }
}

/// Silicon's command-line output: `Silicon finished verification successfully ...`, or
/// `Silicon found N error(s) ...` and one `[i] message (file@line.col--line.col)` each.
pub fn parse(out: &str, file: &Path) -> Answer {
    if out.contains("Silicon finished verification successfully") {
        return Answer::Verified;
    }
    if !out.contains("Silicon found ") {
        let tail: String = out
            .chars()
            .rev()
            .take(300)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Answer::None(format!("Silicon said: {tail}"));
    }
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("program.vpr");
    let mut lines = Vec::new();
    for l in out.lines().filter(|l| l.trim_start().starts_with('[')) {
        let Some(at) = l.rfind(&format!("{name}@")) else {
            continue;
        };
        let rest = &l[at + name.len() + 1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(line) = digits.parse() {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return Answer::None("Silicon's errors could not be placed".into());
    }
    Answer::Failed(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_silicons_verdicts() {
        let file = Path::new("/tmp/x/program.vpr");
        assert_eq!(
            parse(
                "Silicon 1.1\nSilicon finished verification successfully in 1.2s.\n",
                file
            ),
            Answer::Verified
        );
        let failed = "Silicon found 2 errors in 2.0s:\n  [0] Assert might fail. Assertion false might not hold. (program.vpr@7.3--7.15)\n  [1] Postcondition of m might not hold. (program.vpr@12.11--12.20)\n";
        assert_eq!(parse(failed, file), Answer::Failed(vec![7, 12]));
        assert!(matches!(
            parse("Exception in thread main", file),
            Answer::None(_)
        ));
    }
}
