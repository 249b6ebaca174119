//! The two back ends against each other over the corpus: each error one of them reports on
//! a line where the other does not, inside a member both gave a verdict on. Compared with
//! the committed list of known disagreements (`tests/corpus/cross-check-disagreements.txt`,
//! each with its cause), so the list cannot grow unnoticed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::compare::canonical;
use crate::corpus::FileResult;

/// One error only one back end reports: `file:line id` and which back end.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Disagreement {
    pub file: String,
    pub line: u32,
    pub id: String,
    /// `symbex` or `vcg`: the back end that reports it.
    pub only_by: String,
}

impl Disagreement {
    /// How the committed list writes it (before `#` and the cause).
    pub fn key(&self) -> String {
        format!(
            "{}:{} {} only-{}",
            self.file, self.line, self.id, self.only_by
        )
    }
}

/// The disagreements between the symbolic engine's results and the VCG's, over the files
/// both ran.
pub fn disagreements(symbex: &[FileResult], vcg: &[FileResult]) -> Vec<Disagreement> {
    let by_name: BTreeMap<&str, &FileResult> =
        vcg.iter().map(|r| (r.file.name.as_str(), r)).collect();
    let mut out = Vec::new();
    for a in symbex {
        let Some(b) = by_name.get(a.file.name.as_str()) else {
            continue;
        };
        let main = canonical(&a.file.path);
        let judged_by_both =
            |file: &Path, line: u32| a.verdicts.judged(file, line) && b.verdicts.judged(file, line);
        let set = |r: &FileResult| -> BTreeSet<(std::path::PathBuf, u32, String)> {
            r.reported
                .iter()
                .filter(|l| !l.id.starts_with("internal"))
                .filter(|l| judged_by_both(&l.file, l.line))
                .map(|l| (l.file.clone(), l.line, l.id.clone()))
                .collect()
        };
        let (sa, sb) = (set(a), set(b));
        for (only, by) in [(sa.difference(&sb), "symbex"), (sb.difference(&sa), "vcg")] {
            for (file, line, id) in only {
                let name = if *file == main {
                    a.file.name.clone()
                } else {
                    file.display().to_string()
                };
                out.push(Disagreement {
                    file: name,
                    line: *line,
                    id: id.clone(),
                    only_by: by.to_string(),
                });
            }
        }
    }
    out.sort();
    out
}

/// The committed list: key to cause.
pub fn read_list(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(|l| match l.split_once('#') {
            Some((key, cause)) => (key.trim().to_string(), cause.trim().to_string()),
            None => (l.trim().to_string(), String::new()),
        })
        .collect()
}

/// What comparing the disagreements found with a committed list gave.
pub struct Outcome {
    /// Disagreements not in the list.
    pub new: usize,
}

impl Outcome {
    /// Fails the test if a disagreement is not in the list at `path`.
    pub fn assert_none_new(&self, path: &Path) {
        assert!(
            self.new == 0,
            "{} disagreements between the back ends are not in {} (see NEW DISAGREEMENT lines)",
            self.new,
            path.display()
        );
    }
}

/// Compares `found` with the committed list at `path`: prints the count per cause class,
/// each new disagreement (`NEW DISAGREEMENT`) and each listed one no longer found
/// (`RESOLVED`). With `GERMANIUM_UPDATE_CROSS_CHECK=1` the new ones are appended to the list,
/// their cause to be written, and none counts as new.
pub fn against_list(found: &[Disagreement], path: &Path, compared: &BTreeSet<String>) -> Outcome {
    let listed = read_list(path);
    let keys: BTreeSet<String> = found.iter().map(|d| d.key()).collect();
    let new: Vec<&String> = keys.iter().filter(|k| !listed.contains_key(*k)).collect();
    // Entries of files not compared this time are neither found nor resolved.
    let in_compared = |k: &String| {
        k.split_once(':')
            .is_none_or(|(file, _)| compared.contains(file))
    };
    for key in listed
        .keys()
        .filter(|k| !keys.contains(*k) && in_compared(k))
    {
        println!("RESOLVED {key} (no longer a disagreement: remove it from the list)");
    }
    let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
    for key in &keys {
        if let Some(cause) = listed.get(key) {
            let class = cause.split(':').next().unwrap_or(cause);
            *causes.entry(class).or_default() += 1;
        }
    }
    println!(
        "\ncross-check: {} disagreements ({} new)",
        keys.len(),
        new.len()
    );
    for (cause, n) in &causes {
        println!("  {n:4}  {cause}");
    }
    for key in &new {
        println!("NEW DISAGREEMENT {key}");
    }
    if std::env::var("GERMANIUM_UPDATE_CROSS_CHECK").as_deref() == Ok("1") {
        let mut text = std::fs::read_to_string(path).unwrap_or_default();
        for key in &new {
            text.push_str(&format!("{key}  # cause not yet found\n"));
        }
        std::fs::write(path, text).expect("the cross-check list is writable");
        return Outcome { new: 0 };
    }
    Outcome { new: new.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_reads_keys_and_causes() {
        let dir = std::env::temp_dir().join(format!("gm-cross-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("list.txt");
        std::fs::write(
            &path,
            "# a comment\nviper-tests/a.vpr:3 assert.failed:assertion.false only-vcg  # why\n",
        )
        .unwrap();
        let list = read_list(&path);
        assert_eq!(
            list.get("viper-tests/a.vpr:3 assert.failed:assertion.false only-vcg"),
            Some(&"why".to_string())
        );
        assert_eq!(list.len(), 1);
    }
}
