//! The result cache against verification from scratch on corpus files, under edits that
//! change what members depend on: `ensures false` added to a method's contract (its callers
//! may now prove more), `assert false` at the start of a method's body, a predicate's body
//! replaced by `false`. After each edit, a run through a cache filled from the unedited file
//! must report exactly what a run without the cache reports. (`bench/cache/edits` makes the
//! same edits on any file.)

use std::path::{Path, PathBuf};

use germanium_driver::{run_file, CacheSettings, Mode, Options};
use germanium_syntax::ast::{ItemKind, NodeIdGen};
use germanium_syntax::SourceMap;

const FILES: &[&str] = &[
    "viper-tests/all/predicates/lseg.vpr",
    "viper-tests/all/chalice/test2.vpr",
    "viper-tests/all/issues/silicon/0290.vpr",
    "viper-tests/all/issues/silicon/0114.vpr",
];

/// (what, edited text) for every edit of `text`'s methods and predicates.
fn edits(text: &str) -> Vec<(String, String)> {
    let mut sources = SourceMap::new();
    let file = sources.add("f.vpr".into(), text.to_string());
    let (items, diagnostics) = germanium_syntax::parse_file(file, text, &mut NodeIdGen::default());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let splice = |at: usize, to: usize, with: &str| format!("{}{with}{}", &text[..at], &text[to..]);
    let mut out = Vec::new();
    for item in items {
        match item.kind {
            ItemKind::Method(m) => {
                let Some(body) = m.body else { continue };
                let open = body.span.start as usize;
                let name = m.name.name;
                out.push((
                    format!("ensures false in {name}"),
                    splice(open, open, "\n  ensures false\n"),
                ));
                out.push((
                    format!("assert false in {name}"),
                    splice(open + 1, open + 1, "\n  assert false\n"),
                ));
            }
            ItemKind::Predicate(p) => {
                let Some(body) = p.body else { continue };
                let (from, to) = (body.span.start as usize, body.span.end as usize);
                out.push((
                    format!("{} is false", p.name.name),
                    splice(from, to, "false"),
                ));
            }
            _ => {}
        }
    }
    out
}

/// Errors as (line, id).
fn errors(path: &Path, cache: Option<CacheSettings>) -> Vec<(u32, String)> {
    let mut options = Options::new(Mode::Verify);
    options.cache = cache;
    let report = run_file(path, &options);
    report
        .diagnostics
        .iter()
        .map(|d| (report.sources.start(d.span).line, d.id.clone()))
        .collect()
}

#[test]
fn cached_results_after_edits_are_those_of_a_run_from_scratch() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let mut checked = 0;
    for name in FILES {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        for (what, edited) in edits(&text) {
            let scratch = tempfile::tempdir().unwrap();
            let settings = CacheSettings {
                path: scratch.path().join("results.redb"),
                salt: "test".into(),
            };
            let path = scratch.path().join("f.vpr");
            std::fs::write(&path, &text).unwrap();
            errors(&path, Some(settings.clone()));
            std::fs::write(&path, &edited).unwrap();
            let expected = errors(&path, None);
            assert_eq!(errors(&path, Some(settings)), expected, "{name}: {what}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} edits");
}
