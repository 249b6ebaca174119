//! Human-readable results of a corpus run, and the committed list of passing files.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::classify::FeatureClass;
use crate::compare::Located;
use crate::corpus::FileResult;

/// Per group (directory) counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub files: usize,
    pub passing: usize,
    /// Files expecting at least one front-end error, and how many of them pass.
    pub expecting_errors: usize,
    pub expecting_errors_passing: usize,
    /// Files expecting no front-end error, and how many of them Germanium accepts cleanly.
    pub clean: usize,
    pub clean_accepted: usize,
}

impl Counts {
    fn add(&mut self, result: &FileResult) {
        let passes = result.comparison.passes();
        self.files += 1;
        self.passing += passes as usize;
        if result.comparison.expects_front_end_error {
            self.expecting_errors += 1;
            self.expecting_errors_passing += passes as usize;
        } else {
            self.clean += 1;
            self.clean_accepted += passes as usize;
        }
    }
}

/// The table of counts per group, with a total row.
pub fn group_table(results: &[FileResult]) -> String {
    let mut groups: Vec<(String, Counts)> = Vec::new();
    let mut total = Counts::default();
    for result in results {
        let index = match groups.iter().position(|(g, _)| *g == result.file.group) {
            Some(index) => index,
            None => {
                groups.push((result.file.group.clone(), Counts::default()));
                groups.len() - 1
            }
        };
        groups[index].1.add(result);
        total.add(result);
    }
    // Viper's directories in their usual order, then the seed tests.
    let rank = |group: &str| {
        crate::corpus::VIPER_VERIFICATION_DIRS
            .iter()
            .position(|d| *d == group)
            .unwrap_or(usize::MAX)
    };
    groups.sort_by_key(|(group, _)| rank(group));
    groups.push(("total".to_string(), total));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:>6} {:>8} {:>18} {:>18}",
        "directory", "files", "passing", "expect-error pass", "clean accepted"
    );
    for (group, c) in &groups {
        let _ = writeln!(
            out,
            "{:<24} {:>6} {:>8} {:>18} {:>18}",
            group,
            c.files,
            c.passing,
            format!("{}/{}", c.expecting_errors_passing, c.expecting_errors),
            format!("{}/{}", c.clean_accepted, c.clean),
        );
    }
    out
}

/// Pass rates per feature class (a file counts in every class it belongs to).
pub fn class_table(results: &[FileResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:>6} {:>8}",
        "feature class", "files", "passing"
    );
    for class in FeatureClass::ALL {
        let members: Vec<&FileResult> = results
            .iter()
            .filter(|r| r.classes.contains(&class))
            .collect();
        let passing = members.iter().filter(|r| r.comparison.passes()).count();
        let _ = writeln!(
            out,
            "{:<24} {:>6} {:>8}",
            class.name(),
            members.len(),
            passing
        );
    }
    out.push_str(&heap_abstraction_row(results));
    let unclassified = results.iter().filter(|r| r.classes.is_empty()).count();
    if unclassified > 0 {
        let _ = writeln!(out, "{:<24} {:>6}", "(no program: crashed)", unclassified);
    }
    out.push_str(&core_by_directory(results));
    out
}

/// Whether a file uses predicates or function bodies but neither magic wands nor quantified
/// permissions: the scope of the predicate-and-function verifier.
pub fn in_heap_abstraction_scope(result: &FileResult) -> bool {
    let has = |c| result.classes.contains(&c);
    (has(FeatureClass::Predicates) || has(FeatureClass::FunctionBodies))
        && !has(FeatureClass::MagicWands)
        && !has(FeatureClass::QuantifiedPermissions)
}

/// The pass rate of [`in_heap_abstraction_scope`] files, overall and per directory.
fn heap_abstraction_row(results: &[FileResult]) -> String {
    let members: Vec<&FileResult> = results
        .iter()
        .filter(|r| in_heap_abstraction_scope(r))
        .collect();
    let passing = members.iter().filter(|r| r.comparison.passes()).count();
    let mut out = format!(
        "{:<24} {:>6} {:>8}\n",
        "pred/fn, no wand/QP",
        members.len(),
        passing
    );
    let mut groups: Vec<&str> = Vec::new();
    for r in &members {
        if !groups.contains(&r.file.group.as_str()) {
            groups.push(&r.file.group);
        }
    }
    let cells: Vec<String> = groups
        .iter()
        .map(|group| {
            let here: Vec<&&FileResult> =
                members.iter().filter(|r| r.file.group == *group).collect();
            let passing = here.iter().filter(|r| r.comparison.passes()).count();
            format!("{group} {passing}/{}", here.len())
        })
        .collect();
    let _ = writeln!(out, "  per directory: {}", cells.join(", "));
    out
}

/// Core files (none of the other classes) per directory: the yardstick of the core verifier.
fn core_by_directory(results: &[FileResult]) -> String {
    let mut groups: Vec<&str> = Vec::new();
    for r in results {
        if !groups.contains(&r.file.group.as_str()) {
            groups.push(&r.file.group);
        }
    }
    let mut out = String::from("\ncore files per directory: ");
    let cells: Vec<String> = groups
        .iter()
        .filter_map(|group| {
            let core: Vec<&FileResult> = results
                .iter()
                .filter(|r| r.file.group == *group && r.classes.contains(&FeatureClass::Core))
                .collect();
            let passing = core.iter().filter(|r| r.comparison.passes()).count();
            (!core.is_empty()).then(|| format!("{group} {passing}/{}", core.len()))
        })
        .collect();
    out.push_str(&cells.join(", "));
    out.push('\n');
    out
}

/// One line per failing file: what was expected but missing, and what was unexpected.
pub fn failure_lines(results: &[FileResult]) -> String {
    let mut out = String::new();
    for result in results.iter().filter(|r| !r.comparison.passes()) {
        let main = crate::compare::canonical(&result.file.path);
        let show = |items: &[Located]| {
            items
                .iter()
                .map(|l| {
                    if l.file == main {
                        format!("({}, {})", l.id, l.line)
                    } else {
                        let name = l.file.file_name().unwrap_or_default().to_string_lossy();
                        format!("({}, {name}:{})", l.id, l.line)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(
            out,
            "FAIL {}: missing [{}] unexpected [{}] ({} ms) {{{}}}",
            result.file.name,
            show(&result.comparison.missing),
            show(&result.comparison.unexpected),
            result.time.as_millis(),
            result
                .classes
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for result in results {
        for (file, line) in &result.malformed {
            let _ = writeln!(
                out,
                "WARN {}: unreadable or dangling annotation at {}:{line}",
                result.file.name,
                file.display()
            );
        }
    }
    out
}

/// Names of the passing files, sorted.
pub fn passing_names(results: &[FileResult]) -> BTreeSet<String> {
    results
        .iter()
        .filter(|r| r.comparison.passes())
        .map(|r| r.file.name.clone())
        .collect()
}

/// Reads a pass list: one name per line; blank lines and `#` comments ignored. A missing file
/// is an empty list.
pub fn read_pass_list(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

pub fn write_pass_list(path: &Path, names: &BTreeSet<String>) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = String::new();
    for name in names {
        text.push_str(name);
        text.push('\n');
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Comparison;
    use crate::corpus::CorpusFile;

    fn result(group: &str, name: &str, passes: bool, expects_error: bool) -> FileResult {
        let mut comparison = Comparison {
            expects_front_end_error: expects_error,
            ..Default::default()
        };
        if !passes {
            comparison.unexpected.push(Located {
                file: name.into(),
                line: 3,
                id: "parser.error".into(),
            });
        }
        FileResult {
            file: CorpusFile {
                name: name.into(),
                path: name.into(),
                group: group.into(),
            },
            comparison,
            classes: vec![FeatureClass::Core],
            malformed: vec![],
            missed_in_verified: vec![],
            reported: vec![],
            verdicts: Default::default(),
            time: Default::default(),
        }
    }

    #[test]
    fn tables_count_and_failures_name_file_line_and_id() {
        let results = [
            result("all", "a.vpr", true, true),
            result("all", "b.vpr", false, false),
            result("wands", "c.vpr", true, false),
        ];
        let table = group_table(&results);
        assert!(
            table.contains(
                "all                           2        1                1/1                0/1"
            ),
            "{table}"
        );
        assert!(
            table.contains("total                         3        2"),
            "{table}"
        );
        assert!(class_table(&results).contains("core                          3        2"));
        let failures = failure_lines(&results);
        assert!(
            failures.contains("FAIL b.vpr: missing [] unexpected [(parser.error, 3)]"),
            "{failures}"
        );
        assert_eq!(
            passing_names(&results).into_iter().collect::<Vec<_>>(),
            ["a.vpr", "c.vpr"]
        );
    }

    #[test]
    fn pass_lists_round_trip() {
        let path = std::env::temp_dir().join(format!("germanium-pass-{}.txt", std::process::id()));
        let names: BTreeSet<String> = ["b".to_string(), "a".to_string()].into();
        write_pass_list(&path, &names).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
        assert_eq!(read_pass_list(&path), names);
        let _ = std::fs::remove_file(&path);
    }
}
