//! Tests of import resolution with a stand-in parser that only understands `import` lines,
//! so they do not depend on the real parser.

use super::*;
use crate::ast::Import;

/// Parses each line `import "x"` / `import <x>` into an import item; ignores other lines.
fn import_lines(file: FileId, text: &str, _ids: &mut NodeIdGen) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut items = Vec::new();
    let mut offset = 0u32;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("import ") {
            let rest = rest.trim();
            let name = rest[1..rest.len() - 1].to_string();
            let target = if rest.starts_with('<') {
                ImportTarget::Standard(name)
            } else {
                ImportTarget::Local(name)
            };
            let span = Span::new(file, offset, offset + trimmed.len() as u32);
            items.push(Item {
                annotations: Vec::new(),
                kind: ItemKind::Import(Import { target, span }),
                span,
            });
        }
        offset += line.len() as u32;
    }
    (items, Vec::new())
}

/// A fresh directory under the system's temporary directory.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("germanium-loader-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn load(main: &Path, import_paths: &[PathBuf]) -> (SourceMap, Program, Vec<Diagnostic>) {
    let mut sources = SourceMap::new();
    let mut ids = NodeIdGen::default();
    let (program, diagnostics) = load_with(
        main,
        None,
        import_paths,
        &mut sources,
        &mut ids,
        import_lines,
    );
    (sources, program, diagnostics)
}

fn loaded_names(sources: &SourceMap) -> Vec<String> {
    sources
        .files()
        .map(|(_, f)| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn follows_relative_imports_once_even_in_cycles() {
    let dir = scratch_dir("cycle");
    let main = write(
        &dir,
        "main.vpr",
        b"import \"a.vpr\"\nimport \"sub/b.vpr\"\n",
    );
    write(
        &dir,
        "a.vpr",
        b"import \"sub/b.vpr\"\nimport \"main.vpr\"\n",
    );
    write(
        &dir,
        "sub/b.vpr",
        b"import \"../a.vpr\"\nimport \"../sub/../main.vpr\"\n",
    );
    let (sources, program, diagnostics) = load(&main, &[]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(loaded_names(&sources), ["main.vpr", "a.vpr", "b.vpr"]);
    // Import items are kept: 2 per file.
    assert_eq!(program.items.len(), 6);
}

#[test]
fn missing_import_is_a_parser_error_at_the_import() {
    let dir = scratch_dir("missing");
    let main = write(
        &dir,
        "main.vpr",
        b"// header\nimport \"nowhere.vpr\"\nimport <no/where.vpr>\n",
    );
    let (sources, _, diagnostics) = load(&main, &[]);
    assert_eq!(diagnostics.len(), 2);
    for (diagnostic, line) in diagnostics.iter().zip([2, 3]) {
        assert_eq!(diagnostic.id, "parser.error");
        assert_eq!(sources.start(diagnostic.span).line, line);
    }
    assert!(diagnostics[0].message.contains("\"nowhere.vpr\""));
    assert!(diagnostics[1].message.contains("<no/where.vpr>"));
}

#[test]
fn missing_main_file_is_reported_not_panicked() {
    let dir = scratch_dir("nomain");
    let (sources, program, diagnostics) = load(&dir.join("absent.vpr"), &[]);
    assert!(program.items.is_empty());
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].id, "parser.error");
    assert_eq!(sources.start(diagnostics[0].span).line, 1);
}

#[test]
fn non_utf8_file_is_reported_at_the_bad_byte() {
    let dir = scratch_dir("utf8");
    let main = write(&dir, "main.vpr", b"method m()\n{ \xff }\n");
    let (sources, _, diagnostics) = load(&main, &[]);
    assert_eq!(diagnostics.len(), 1);
    let at = sources.start(diagnostics[0].span);
    assert_eq!((at.line, at.column), (2, 3));
}

#[test]
fn standard_imports_use_the_library_then_import_paths_in_order() {
    let dir = scratch_dir("standard");
    let first = dir.join("first");
    let second = dir.join("second");
    write(&second, "lib/x.vpr", b"");
    write(&first, "lib/x.vpr", b"import <lib/y.vpr>\n");
    write(&second, "lib/y.vpr", b"");
    // A file shadowing a library file is not used: the library comes first.
    write(&first, "decreases/int.vpr", b"");
    let main = write(
        &dir,
        "main.vpr",
        b"import <lib/x.vpr>\nimport <decreases/int.vpr>\n",
    );
    let (sources, _, diagnostics) = load(&main, &[first.clone(), second.clone()]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let paths: Vec<PathBuf> = sources.files().map(|(_, f)| f.path.clone()).collect();
    assert_eq!(
        paths,
        [
            main,
            first.join("lib/x.vpr"),
            PathBuf::from("<std>/decreases/int.vpr"),
            second.join("lib/y.vpr"),
            PathBuf::from("<std>/decreases/declaration.vpr"),
        ]
    );
}

#[test]
fn library_files_import_each_other_relatively() {
    let dir = scratch_dir("library");
    let main = write(
        &dir,
        "main.vpr",
        b"import <decreases/all.vpr>\nimport <decreases/int.vpr>\n",
    );
    let (sources, _, diagnostics) = load(&main, &[]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let library: HashSet<String> = sources
        .files()
        .filter_map(|(_, f)| library_path(&f.path))
        .collect();
    // all.vpr, the nine orders it imports, declaration.vpr and pi.vpr, each once.
    assert_eq!(library.len(), 12, "{library:?}");
    assert_eq!(sources.files().count(), 13);
}

#[test]
fn every_library_file_loads_without_errors_with_the_real_parser() {
    for path in stdlib::paths() {
        let dir = scratch_dir("real");
        let main = write(&dir, "main.vpr", format!("import <{path}>\n").as_bytes());
        let mut sources = SourceMap::new();
        let mut ids = NodeIdGen::default();
        let (_, diagnostics) = load_program(&main, &[], &mut sources, &mut ids);
        assert!(diagnostics.is_empty(), "{path}: {diagnostics:?}");
    }
}

#[test]
fn loads_library_files_with_their_imports_once() {
    let mut sources = SourceMap::new();
    let mut ids = NodeIdGen::default();
    let (items, diagnostics) = load_library_files(
        &["decreases/int.vpr", "decreases/ref.vpr", "no/such.vpr"],
        &mut sources,
        &mut ids,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let names = loaded_names(&sources);
    assert_eq!(
        names
            .iter()
            .filter(|n| n.ends_with("declaration.vpr"))
            .count(),
        1,
        "{names:?}"
    );
    let domains: Vec<&str> = items
        .iter()
        .filter_map(|i| match &i.kind {
            ItemKind::Domain(d) => Some(d.name.name.as_str()),
            _ => None,
        })
        .collect();
    for d in [
        "IntWellFoundedOrder",
        "RefWellFoundedOrder",
        "WellFoundedOrder",
    ] {
        assert!(domains.contains(&d), "{domains:?}");
    }
}
