//! Which expected errors Germanium missed inside members it claims to have verified.
//!
//! A missed expected error is excused only where Germanium said it did not verify the member
//! (an `internal...` diagnostic inside the member's declaration, or one outside every member,
//! which covers the whole file). Every other miss is a soundness problem unless it is one of
//! the documented deviations in `tests/corpus/verify-missed-accepted.txt`.

use std::collections::BTreeMap;
use std::path::Path;

use germanium_driver::FileReport;
use germanium_syntax::diagnostic::ids;
use germanium_syntax::Span;

use crate::compare::{canonical, is_front_end, Located};

/// Which members of a file got a verdict: the members' line ranges (file, first, last), and
/// whether each was left unverified (an `internal...` diagnostic inside it).
#[derive(Clone, Debug, Default)]
pub struct Verdicts {
    members: Vec<(std::path::PathBuf, (u32, u32))>,
    unverified: Vec<bool>,
    /// Nothing in the file was claimed (a crash, a front-end error, an `internal` outside
    /// every member).
    whole_file_unverified: bool,
}

impl Verdicts {
    /// Whether a verdict covers `line` of `file`: it lies in a member claimed verified or
    /// failing (or outside every member of a file with a verdict).
    pub fn judged(&self, file: &Path, line: u32) -> bool {
        if self.whole_file_unverified {
            return false;
        }
        match self.member_at(file, line) {
            Some(index) => !self.unverified[index],
            None => true,
        }
    }

    fn member_at(&self, file: &Path, line: u32) -> Option<usize> {
        self.members
            .iter()
            .position(|(f, (start, end))| f == file && *start <= line && line <= *end)
    }
}

/// The verdicts of a report (see [`Verdicts`]).
pub fn verdicts(report: &FileReport) -> Verdicts {
    let unclaimed = Verdicts {
        whole_file_unverified: true,
        ..Verdicts::default()
    };
    let Some(program) = &report.program else {
        return unclaimed; // the file crashed: nothing was claimed
    };
    let rejected = report
        .diagnostics
        .iter()
        .any(|d| d.is_error() && is_front_end(&d.id));
    if rejected {
        return unclaimed; // the front end rejected the program: nothing was verified
    }
    let line_range = |span: Span| {
        (
            report.sources.start(span).line,
            report.sources.end(span).line,
        )
    };
    let file_of = |span: Span| canonical(&report.sources.get(span.file).path);
    let mut verdicts = Verdicts {
        members: program
            .items
            .iter()
            .map(|item| (file_of(item.span), line_range(item.span)))
            .collect(),
        ..Verdicts::default()
    };
    verdicts.unverified = vec![false; verdicts.members.len()];
    for diagnostic in report
        .diagnostics
        .iter()
        .filter(|d| d.id.starts_with("internal"))
    {
        if diagnostic.id == ids::INTERNAL {
            // Germanium could not finish (no solver, a crash): it claimed nothing.
            verdicts.whole_file_unverified = true;
            continue;
        }
        let line = report.sources.start(diagnostic.span).line;
        match verdicts.member_at(&file_of(diagnostic.span), line) {
            Some(index) => verdicts.unverified[index] = true,
            None => verdicts.whole_file_unverified = true,
        }
    }
    verdicts
}

/// The expected errors in `missing` that lie in members Germanium verified.
pub fn missed_in_verified_members(report: &FileReport, missing: &[Located]) -> Vec<Located> {
    let verdicts = verdicts(report);
    missing
        .iter()
        .filter(|miss| verdicts.judged(&miss.file, miss.line))
        .cloned()
        .collect()
}

/// Reads the accepted deviations: lines `corpus/name.vpr:LINE id  # reason` (a line of a
/// file may have several, one per id).
pub fn read_accepted(path: &Path) -> BTreeMap<(String, u32), Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut accepted: BTreeMap<(String, u32), Vec<String>> = BTreeMap::new();
    let entries = text
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .filter_map(|line| {
            let (place, id) = line.split_once(char::is_whitespace)?;
            let (name, number) = place.rsplit_once(':')?;
            Some((
                (name.to_string(), number.parse().ok()?),
                id.trim().to_string(),
            ))
        });
    for (place, id) in entries {
        accepted.entry(place).or_default().push(id);
    }
    accepted
}
