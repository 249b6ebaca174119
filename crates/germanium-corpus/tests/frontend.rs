//! Programs that a real front end generated give Silicon's answers: each program of
//! `../shared/frontend-programs/nagini/` (read in place) against Silicon's record in its
//! `silicon.jsonl`. The verdict must be Silicon's; where the record has Silicon's errors
//! with their lines, the same ids on the same lines, as often; elsewhere the same set of
//! ids. Nagini renames some of Silicon's errors into its own (`leak_check.failed`, for a
//! postcondition that says no obligation leaks): ids that are not Viper's are not compared.
//! No construct may be reported unsupported.

use std::path::Path;

use germanium_corpus::corpus::SharedPaths;
use germanium_driver::{run_file, Mode, Options};
use serde_json::Value;

/// Viper's error ids (`../shared/spec/error-ids.md`), the part before the reason.
const VIPER_ERRORS: &[&str] = &[
    "assignment.failed",
    "call.failed",
    "call.precondition",
    "application.precondition",
    "not.wellformed",
    "exhale.failed",
    "inhale.failed",
    "if.failed",
    "while.failed",
    "assert.failed",
    "refute.failed",
    "postcondition.violated",
    "fold.failed",
    "unfold.failed",
    "package.failed",
    "apply.failed",
    "invariant.not.preserved",
    "invariant.not.established",
    "function.not.wellformed",
    "predicate.not.wellformed",
    "wand.not.wellformed",
    "termination.failed",
    "internal",
];

fn is_viper_id(id: &str) -> bool {
    VIPER_ERRORS.contains(&id.split(':').next().unwrap_or(id))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn nagini_programs_give_silicons_answers() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = SharedPaths::from_crate_dir(crate_dir)
        .root
        .join("frontend-programs/nagini");
    let records = std::fs::read_to_string(dir.join("silicon.jsonl"))
        .expect("../shared/frontend-programs/nagini/silicon.jsonl");
    let mut differences = Vec::new();
    let mut programs = 0;
    for line in records.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).expect("a JSON record");
        let file = record["file"].as_str().expect("a file").to_string();
        programs += 1;
        let report = run_file(&dir.join(&file), &Options::new(Mode::Verify));
        let errors: Vec<(String, u32)> = report
            .diagnostics
            .iter()
            .map(|d| (d.id.clone(), report.sources.start(d.span).line))
            .collect();
        let verdict = if errors.is_empty() {
            "verified"
        } else {
            "failed"
        };
        let mut problems = Vec::new();
        if record["silicon"].as_str() != Some(verdict) {
            problems.push(format!(
                "verdict {verdict}, Silicon's {}",
                record["silicon"]
            ));
        }
        if errors
            .iter()
            .any(|(id, _)| id.contains("feature.unsupported"))
        {
            problems.push("a construct reported unsupported".to_string());
        }
        if let Some(on_text) = record["silicon_errors_on_text"].as_array() {
            let mut expected: Vec<(String, u32)> = on_text
                .iter()
                .map(|e| {
                    let id = e["id"].as_str().unwrap_or_default().to_string();
                    (id, e["line"].as_u64().unwrap_or_default() as u32)
                })
                .filter(|(id, _)| is_viper_id(id))
                .collect();
            let mut reported = errors.clone();
            expected.sort();
            reported.sort();
            if expected != reported {
                problems.push(format!("errors {reported:?}, Silicon's {expected:?}"));
            }
        } else {
            let mut expected = strings(&record["silicon_error_ids"]);
            let foreign = expected.iter().any(|id| !is_viper_id(id));
            expected.retain(|id| is_viper_id(id));
            expected.sort();
            expected.dedup();
            let mut reported: Vec<String> = errors.iter().map(|(id, _)| id.clone()).collect();
            reported.sort();
            reported.dedup();
            let agrees = if foreign {
                expected.iter().all(|id| reported.contains(id))
            } else {
                expected == reported
            };
            if !agrees {
                problems.push(format!("error ids {reported:?}, Silicon's {expected:?}"));
            }
        }
        if !problems.is_empty() {
            differences.push(format!("{file}: {}", problems.join("; ")));
        }
    }
    assert!(programs > 0, "no programs in {}", dir.display());
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
