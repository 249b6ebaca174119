//! The progress line on stderr (human output to a terminal only): files and members done,
//! the members running and for how long, redrawn in place.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

/// What has been done and what is running.
pub struct Progress {
    files: usize,
    files_done: usize,
    members_done: usize,
    /// (file index, member) → when it started.
    running: BTreeMap<(usize, String), Instant>,
    started: Instant,
    /// Whether a line is on the screen (to be cleared before other output).
    shown: bool,
}

impl Progress {
    pub fn new(files: usize) -> Progress {
        Progress {
            files,
            files_done: 0,
            members_done: 0,
            running: BTreeMap::new(),
            started: Instant::now(),
            shown: false,
        }
    }

    pub fn member_started(&mut self, file: usize, member: &str) {
        self.running
            .insert((file, member.to_string()), Instant::now());
    }

    pub fn member_finished(&mut self, file: usize, member: &str) {
        self.running.remove(&(file, member.to_string()));
        self.members_done += 1;
    }

    pub fn file_done(&mut self) {
        self.files_done += 1;
    }

    /// The line as it reads now.
    pub fn line(&self) -> String {
        let mut line = format!(
            "[{}/{} files, {} members done, {:.1} s]",
            self.files_done,
            self.files,
            self.members_done,
            self.started.elapsed().as_secs_f64()
        );
        // The member running longest, which is the one a person waits for.
        if let Some(((_, member), since)) = self.running.iter().min_by_key(|(_, t)| **t) {
            line.push_str(&format!(
                " verifying {member} ({:.1} s)",
                since.elapsed().as_secs_f64()
            ));
            if self.running.len() > 1 {
                line.push_str(&format!(" and {} more", self.running.len() - 1));
            }
        }
        line
    }

    /// Redraws the line in place.
    pub fn draw(&mut self, err: &mut dyn Write) {
        let _ = write!(err, "\r\x1b[2K{}", self.line());
        let _ = err.flush();
        self.shown = true;
    }

    /// Clears the line (before a report is printed).
    pub fn clear(&mut self, err: &mut dyn Write) {
        if self.shown {
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_and_names_the_member_running() {
        let mut p = Progress::new(2);
        p.member_started(0, "a");
        p.member_finished(0, "a");
        p.member_started(0, "slow");
        p.member_started(1, "b");
        let line = p.line();
        assert!(line.starts_with("[0/2 files, 1 members done, "), "{line}");
        assert!(line.contains("verifying slow ("), "{line}");
        assert!(line.ends_with("and 1 more"), "{line}");
        p.file_done();
        assert!(p.line().starts_with("[1/2 files"));
        let mut out = Vec::new();
        p.draw(&mut out);
        p.clear(&mut out);
        assert!(String::from_utf8(out).unwrap().ends_with("\r\x1b[2K"));
    }
}
