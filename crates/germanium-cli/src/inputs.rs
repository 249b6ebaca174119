//! The files named on the command line: a directory stands for every `.vpr` file under it
//! (in path order), `-` for standard input; anything else is passed on as given, so a file
//! that cannot be read gets its own error report.

use std::path::{Path, PathBuf};

/// `args` with each directory replaced by the `.vpr` files under it. A directory without
/// any stays as it is (its report says it is a directory).
pub fn expand(args: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for arg in args {
        if !arg.is_dir() {
            out.push(arg.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(arg)
            .follow_links(true)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && is_viper(e.path()))
            .map(|e| e.into_path())
            .collect();
        found.sort();
        if found.is_empty() {
            out.push(arg.clone());
        }
        out.extend(found);
    }
    out
}

/// The options for the `index`-th of `count` files: with several files, each writes its
/// own SMT log, `LOG` becoming `LOG-stem.<index>-<file stem>.smt2`, so no file's log
/// overwrites another's.
pub fn for_file(
    options: &germanium_driver::Options,
    index: usize,
    file: &Path,
    count: usize,
) -> germanium_driver::Options {
    let mut options = options.clone();
    if let (Some(log), true) = (&options.smt_log, count > 1) {
        options.smt_log = Some(per_file_log(log, index, file));
    }
    options
}

fn per_file_log(log: &Path, index: usize, file: &Path) -> PathBuf {
    let stem = |p: &Path| {
        p.file_stem()
            .map_or_else(|| "smt".to_string(), |s| s.to_string_lossy().into_owned())
    };
    let name = format!("{}.{}-{}.smt2", stem(log), index + 1, stem(file));
    log.with_file_name(name)
}

fn is_viper(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "vpr")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_of_several_files_gets_its_own_smt_log() {
        let log = Path::new("out/q.smt2");
        assert_eq!(
            per_file_log(log, 0, Path::new("a/x.vpr")),
            Path::new("out/q.1-x.smt2")
        );
        assert_eq!(
            per_file_log(log, 1, Path::new("-")),
            Path::new("out/q.2--.smt2")
        );
        let mut options = germanium_driver::Options::new(germanium_driver::Mode::Verify);
        options.smt_log = Some(log.to_path_buf());
        let one = for_file(&options, 0, Path::new("x.vpr"), 1);
        assert_eq!(one.smt_log.as_deref(), Some(log));
    }

    #[test]
    fn directories_become_their_viper_files_in_order() {
        let dir = std::env::temp_dir().join(format!("germanium-inputs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        for f in ["b.vpr", "a.vpr", "notes.txt", "sub/c.vpr"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let got = expand(&[dir.clone(), PathBuf::from("-"), dir.join("empty")]);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            got,
            [
                dir.join("a.vpr"),
                dir.join("b.vpr"),
                dir.join("sub/c.vpr"),
                PathBuf::from("-"),
                dir.join("empty"),
            ]
        );
    }
}
