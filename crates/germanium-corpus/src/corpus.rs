//! Finding the corpus files and running them through the driver.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use germanium_driver::{Mode, Options};
use rayon::prelude::*;

use crate::annotations::{self, AnnotationKind};
use crate::classify::{classify, FeatureClass};
use crate::compare::{canonical, compare, reported_of, CompareMode, Comparison, Expectations};

/// The directories of Viper's test corpus that its verifiers run as their test suite.
pub const VIPER_VERIFICATION_DIRS: [&str; 9] = [
    "all",
    "quantifiedpermissions",
    "quantifiedpredicates",
    "quantifiedcombinations",
    "wands",
    "termination",
    "refute",
    "adt",
    "quasihavoc",
];

/// One test file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusFile {
    /// Relative to the shared directory, `/`-separated: `viper-tests/all/basic/x.vpr`.
    pub name: String,
    pub path: PathBuf,
    /// The group it is counted in: the Viper directory (`all`, `wands`, ...) or `seed-tests`.
    pub group: String,
}

/// Paths of the shared material, relative to a crate of this workspace.
pub struct SharedPaths {
    pub root: PathBuf,
}

impl SharedPaths {
    /// `/work/shared` seen from the workspace: `<crate>/../../../shared`.
    pub fn from_crate_dir(crate_dir: &Path) -> SharedPaths {
        SharedPaths {
            root: crate_dir.join("../../../shared"),
        }
    }

    /// The `--import-path` the corpus is run with, as Viper's test suite does.
    pub fn import_path(&self) -> PathBuf {
        self.root.join("viper-tests/import")
    }
}

/// The files of the corpus, each list sorted by name.
pub struct Discovered {
    /// Files run as tests.
    pub tests: Vec<CorpusFile>,
    /// Files only imported by tests (see [`library_files`]), not run on their own.
    pub libraries: Vec<CorpusFile>,
}

/// Every `.vpr` file of the verification directories and the seed tests.
pub fn discover(shared: &SharedPaths) -> Discovered {
    let mut files = Vec::new();
    for dir in VIPER_VERIFICATION_DIRS {
        collect(&shared.root, &format!("viper-tests/{dir}"), dir, &mut files);
    }
    collect(&shared.root, "seed-tests", "seed-tests", &mut files);
    files.sort_by(|a, b| a.name.cmp(&b.name));
    let library_paths = library_files(&files);
    let (libraries, tests) = files
        .into_iter()
        .partition(|f| library_paths.contains(&canonical(&f.path)));
    Discovered { tests, libraries }
}

/// The programs front ends generated (`frontend-programs/<front end>/...`), sorted by name,
/// grouped by front end.
pub fn discover_frontend_programs(shared: &SharedPaths) -> Vec<CorpusFile> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(shared.root.join("frontend-programs")) else {
        return files;
    };
    for entry in entries.flatten() {
        if entry.path().is_dir() {
            let front_end = entry.file_name().to_string_lossy().to_string();
            let relative = format!("frontend-programs/{front_end}");
            collect(&shared.root, &relative, &front_end, &mut files);
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    files
}

fn collect(root: &Path, relative: &str, group: &str, out: &mut Vec<CorpusFile>) {
    let Ok(entries) = std::fs::read_dir(root.join(relative)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = format!("{relative}/{}", entry.file_name().to_string_lossy());
        let path = entry.path();
        if path.is_dir() {
            collect(root, &name, group, out);
        } else if name.ends_with(".vpr") {
            out.push(CorpusFile {
                name,
                path,
                group: group.to_string(),
            });
        }
    }
}

/// Files that exist to be imported, not to be run on their own: those another corpus file
/// imports with `import "..."` and that carry no `ExpectedOutput` of their own. (A file with
/// expectations, like `all/import/loop/main.vpr`, which its own libraries import back, stays
/// a test; the annotations of imported files count wherever they are loaded, so a library's
/// expectations are checked through the files importing it.)
pub fn library_files(files: &[CorpusFile]) -> HashSet<PathBuf> {
    let mut imported = HashSet::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file.path) else {
            continue;
        };
        let dir = file.path.parent().unwrap_or(Path::new(""));
        for target in local_imports(&text) {
            imported.insert(canonical(&dir.join(target)));
        }
    }
    files
        .iter()
        .map(|f| canonical(&f.path))
        .filter(|path| imported.contains(path))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let (found, _) = annotations::parse(&text);
            !found
                .iter()
                .any(|a| matches!(a.kind, AnnotationKind::Expected(_)))
        })
        .collect()
}

/// The targets of the `import "..."` lines of a file.
fn local_imports(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("import"))
        .filter_map(|rest| rest.trim().strip_prefix('"'))
        .filter_map(|rest| rest.split_once('"').map(|(target, _)| target))
        .collect()
}

/// The result of one corpus file.
#[derive(Debug)]
pub struct FileResult {
    pub file: CorpusFile,
    pub comparison: Comparison,
    pub classes: Vec<FeatureClass>,
    /// Annotation lines that could not be read, as (file, line).
    pub malformed: Vec<(PathBuf, u32)>,
    /// Expected errors missed inside members Germanium verified (see [`crate::soundness`]).
    pub missed_in_verified: Vec<crate::compare::Located>,
    /// What was reported (for comparing back ends).
    pub reported: Vec<crate::compare::Located>,
    /// Which members got a verdict.
    pub verdicts: crate::soundness::Verdicts,
    pub time: Duration,
}

/// Runs every file in parallel and compares; results in the order of `files`.
pub fn run(files: &[CorpusFile], mode: CompareMode, import_paths: &[PathBuf]) -> Vec<FileResult> {
    run_with(files, mode, import_paths, germanium_driver::Backend::Symbex)
}

/// [`run`] with the chosen back end.
pub fn run_with(
    files: &[CorpusFile],
    mode: CompareMode,
    import_paths: &[PathBuf],
    backend: germanium_driver::Backend,
) -> Vec<FileResult> {
    let mut options = Options::new(match mode {
        CompareMode::FrontEnd => Mode::Check,
        CompareMode::Verify => Mode::Verify,
    });
    options.import_paths = import_paths.to_vec();
    options.backend = backend;
    // `GERMANIUM_CORPUS_TRACE=1`: each file's name as it starts and ends (to find one that
    // takes long or takes the process down).
    let trace = std::env::var("GERMANIUM_CORPUS_TRACE").as_deref() == Ok("1");
    files
        .par_iter()
        .map(|file| {
            if trace {
                eprintln!("corpus: start {}", file.name);
            }
            let report = germanium_driver::run_file(&file.path, &options);
            if trace {
                eprintln!("corpus: done {} in {:.1?}", file.name, report.time);
            }
            let expectations = Expectations::of_report(&report);
            let reported = reported_of(&report);
            let comparison = compare(mode, &expectations, &reported);
            let classes = report.program.as_ref().map(classify).unwrap_or_default();
            let missed_in_verified =
                crate::soundness::missed_in_verified_members(&report, &comparison.missing);
            FileResult {
                file: file.clone(),
                comparison,
                classes,
                malformed: expectations.malformed,
                missed_in_verified,
                reported,
                verdicts: crate::soundness::verdicts(&report),
                time: report.time,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_imports_are_found_textually() {
        let text =
            "import \"a.vpr\"\n  import   \"sub/b.vpr\"\nimport <c.vpr>\n// import \"d.vpr\"\n";
        assert_eq!(local_imports(text), ["a.vpr", "sub/b.vpr"]);
    }
}
