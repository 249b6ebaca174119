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

/// The expected errors in `missing` that lie in members Germanium verified.
pub fn missed_in_verified_members(report: &FileReport, missing: &[Located]) -> Vec<Located> {
    let Some(program) = &report.program else {
        return Vec::new(); // the file crashed: nothing was claimed
    };
    let rejected = report
        .diagnostics
        .iter()
        .any(|d| d.is_error() && is_front_end(&d.id));
    if rejected {
        return Vec::new(); // the front end rejected the program: nothing was verified
    }
    let line_range = |span: Span| {
        (
            report.sources.start(span).line,
            report.sources.end(span).line,
        )
    };
    let file_of = |span: Span| canonical(&report.sources.get(span.file).path);
    let members: Vec<(std::path::PathBuf, (u32, u32))> = program
        .items
        .iter()
        .map(|item| (file_of(item.span), line_range(item.span)))
        .collect();
    let member_at = |file: &Path, line: u32| {
        members
            .iter()
            .position(|(f, (start, end))| f == file && *start <= line && line <= *end)
    };

    let mut unverified = vec![false; members.len()];
    let mut whole_file_unverified = false;
    for diagnostic in report
        .diagnostics
        .iter()
        .filter(|d| d.id.starts_with("internal"))
    {
        if diagnostic.id == ids::INTERNAL {
            // Germanium could not finish (no solver, a crash): it claimed nothing.
            whole_file_unverified = true;
            continue;
        }
        let line = report.sources.start(diagnostic.span).line;
        match member_at(&file_of(diagnostic.span), line) {
            Some(index) => unverified[index] = true,
            None => whole_file_unverified = true,
        }
    }
    if whole_file_unverified {
        return Vec::new();
    }
    missing
        .iter()
        .filter(|miss| match member_at(&miss.file, miss.line) {
            Some(index) => !unverified[index],
            None => true,
        })
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
