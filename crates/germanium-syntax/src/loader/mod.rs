//! Loading a program: the main file and, transitively, every file it imports.
//!
//! - `import "rel/path.vpr"` resolves against the directory of the importing file (for a
//!   standard-library file, against its directory inside the library).
//! - `import <lib/path.vpr>` resolves against Germanium's built-in standard library
//!   ([`stdlib`]) first, then against each `--import-path` directory in order.
//! - Each file is loaded once, identified by its canonical path (library files by their
//!   library path), so import cycles and diamonds are harmless.
//! - The merged [`Program`] holds the items of the main file first, then those of the
//!   imported files in the order they were discovered (breadth first). `Import` items are
//!   kept where they were written; later stages skip them.
//! - Every problem is a `parser.error` [`Diagnostic`], as in Viper: a missing import is
//!   reported at the import statement; an unreadable or non-UTF-8 file at the start of the
//!   file or at the first invalid byte. A file that cannot be decoded is not parsed.
//!
//! Library files appear in the [`SourceMap`] as `<std>/decreases/int.vpr` and the like.

pub mod stdlib;

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::ast::{ImportTarget, Item, ItemKind, NodeIdGen, Program};
use crate::{Diagnostic, FileId, SourceMap, Span};

/// The main file's name that means standard input.
pub const STDIN: &str = "-";

/// Reads and parses `main` (standard input if it is [`STDIN`]) and, transitively, each file it imports (each once; cycles are
/// fine). Relative imports resolve against the importing file; `<...>` imports against the
/// built-in standard library, then `import_paths` in order.
pub fn load_program(
    main: &Path,
    import_paths: &[PathBuf],
    sources: &mut SourceMap,
    ids: &mut NodeIdGen,
) -> (Program, Vec<Diagnostic>) {
    load_with(main, None, import_paths, sources, ids, crate::parse_file)
}

/// [`load_program`] with `text` as the main file's contents in place of what is on disk
/// (an editor's unsaved buffer); imports are still read from disk, relative to `main`.
pub fn load_program_text(
    main: &Path,
    text: String,
    import_paths: &[PathBuf],
    sources: &mut SourceMap,
    ids: &mut NodeIdGen,
) -> (Program, Vec<Diagnostic>) {
    let bytes = Some(text.into_bytes());
    load_with(main, bytes, import_paths, sources, ids, crate::parse_file)
}

/// Reads and parses the standard-library files `names` (e.g. `decreases/int.vpr`) and,
/// transitively, what they import; for imports a verifier adds on its own. Unknown names are
/// skipped (the caller only asks for files of the library).
pub fn load_library_files(
    names: &[&str],
    sources: &mut SourceMap,
    ids: &mut NodeIdGen,
) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut loader = Loader {
        import_paths: &[],
        sources,
        ids,
        parse: crate::parse_file,
        seen: HashSet::new(),
        pending: VecDeque::new(),
        items: Vec::new(),
        diagnostics: Vec::new(),
    };
    for name in names {
        if let Some(Resolved::Library(name, text)) = library(name) {
            loader.add_library_file(name, text);
        }
    }
    loader.run();
    (loader.items, loader.diagnostics)
}

/// [`load_program`] with the parser as a parameter, so the import logic can be tested on its own.
fn load_with<P>(
    main: &Path,
    main_bytes: Option<Vec<u8>>,
    import_paths: &[PathBuf],
    sources: &mut SourceMap,
    ids: &mut NodeIdGen,
    parse: P,
) -> (Program, Vec<Diagnostic>)
where
    P: FnMut(FileId, &str, &mut NodeIdGen) -> (Vec<Item>, Vec<Diagnostic>),
{
    let mut loader = Loader {
        import_paths,
        sources,
        ids,
        parse,
        seen: HashSet::new(),
        pending: VecDeque::new(),
        items: Vec::new(),
        diagnostics: Vec::new(),
    };
    loader.add_main(main, main_bytes);
    loader.run();
    let program = Program {
        items: loader.items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    (program, loader.diagnostics)
}

/// Identity of a loaded file, to load each only once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileKey {
    Disk(PathBuf),
    Library(String),
}

struct Loader<'a, P> {
    import_paths: &'a [PathBuf],
    sources: &'a mut SourceMap,
    ids: &'a mut NodeIdGen,
    parse: P,
    seen: HashSet<FileKey>,
    /// Files read and decoded but not yet parsed.
    pending: VecDeque<FileId>,
    items: Vec<Item>,
    diagnostics: Vec<Diagnostic>,
}

/// Where an import statement points, once resolved.
enum Resolved {
    Disk(PathBuf),
    Library(String, &'static str),
}

impl<P> Loader<'_, P>
where
    P: FnMut(FileId, &str, &mut NodeIdGen) -> (Vec<Item>, Vec<Diagnostic>),
{
    fn add_main(&mut self, main: &Path, given: Option<Vec<u8>>) {
        let read = if let Some(bytes) = given {
            Ok(bytes)
        } else if main == Path::new(STDIN) {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map(|_| bytes)
        } else {
            std::fs::read(main)
        };
        match read {
            Ok(bytes) => {
                self.seen.insert(disk_key(main));
                self.add_disk_file(main.to_path_buf(), bytes);
            }
            Err(err) => {
                let file = self.sources.add(main.to_path_buf(), String::new());
                self.diagnostics.push(Diagnostic::parser(
                    Span::new(file, 0, 0),
                    format!("cannot read `{}`: {err}", main.display()),
                ));
            }
        }
    }

    fn run(&mut self) {
        while let Some(file) = self.pending.pop_front() {
            let (items, diagnostics) = (self.parse)(file, &self.sources.get(file).text, self.ids);
            self.diagnostics.extend(diagnostics);
            for item in &items {
                if let ItemKind::Import(import) = &item.kind {
                    self.follow(file, &import.target, import.span);
                }
            }
            self.items.extend(items);
        }
    }

    /// Adds a file read from disk to the source map and queues it for parsing, unless its
    /// bytes are not UTF-8 (then it is reported at the first bad byte and not parsed).
    fn add_disk_file(&mut self, path: PathBuf, bytes: Vec<u8>) {
        match String::from_utf8(bytes) {
            Ok(text) => {
                let file = self.sources.add(path, text);
                self.pending.push_back(file);
            }
            Err(err) => {
                let bad = err.utf8_error();
                let start = bad.valid_up_to() as u32;
                let text = String::from_utf8_lossy(err.as_bytes()).into_owned();
                let file = self.sources.add(path, text);
                // In the lossy text the bad bytes became one U+FFFD (3 bytes) at `start`.
                let span = Span::new(file, start, start + 3);
                self.diagnostics.push(Diagnostic::parser(
                    span,
                    "the file is not valid UTF-8 text; Viper programs must be UTF-8",
                ));
            }
        }
    }

    /// Queues a library file for parsing, unless it was loaded already.
    fn add_library_file(&mut self, name: String, text: &'static str) {
        if self.seen.insert(FileKey::Library(name.clone())) {
            let path = Path::new(stdlib::STD_PREFIX).join(&name);
            let file = self.sources.add(path, text.to_string());
            self.pending.push_back(file);
        }
    }

    fn follow(&mut self, from: FileId, target: &ImportTarget, at: Span) {
        let Some(resolved) = self.resolve(from, target) else {
            let (open, name, close) = match target {
                ImportTarget::Local(name) => ("\"", name, "\""),
                ImportTarget::Standard(name) => ("<", name, ">"),
            };
            self.diagnostics.push(Diagnostic::parser(
                at,
                format!("cannot import {open}{name}{close}: file not found"),
            ));
            return;
        };
        match resolved {
            Resolved::Library(name, text) => self.add_library_file(name, text),
            Resolved::Disk(path) => {
                if !self.seen.insert(disk_key(&path)) {
                    return;
                }
                match std::fs::read(&path) {
                    Ok(bytes) => self.add_disk_file(path, bytes),
                    Err(err) => self.diagnostics.push(Diagnostic::parser(
                        at,
                        format!("cannot read imported file `{}`: {err}", path.display()),
                    )),
                }
            }
        }
    }

    fn resolve(&self, from: FileId, target: &ImportTarget) -> Option<Resolved> {
        let importer = &self.sources.get(from).path;
        match target {
            ImportTarget::Local(name) => match library_path(importer) {
                Some(importer_in_library) => {
                    let dir = importer_in_library
                        .rsplit_once('/')
                        .map_or("", |(dir, _)| dir);
                    if dir.is_empty() {
                        library(name)
                    } else {
                        library(&format!("{dir}/{name}"))
                    }
                }
                None => {
                    let dir = importer.parent().unwrap_or(Path::new(""));
                    let path = dir.join(name);
                    path.is_file().then_some(Resolved::Disk(path))
                }
            },
            ImportTarget::Standard(name) => library(name).or_else(|| {
                self.import_paths
                    .iter()
                    .map(|dir| dir.join(name))
                    .find(|path| path.is_file())
                    .map(Resolved::Disk)
            }),
        }
    }
}

fn library(name: &str) -> Option<Resolved> {
    stdlib::lookup(name).map(|(name, text)| Resolved::Library(name, text))
}

/// The path inside the library of a file loaded from it (`<std>/a/b.vpr` → `a/b.vpr`).
fn library_path(path: &Path) -> Option<String> {
    let rest = path.strip_prefix(stdlib::STD_PREFIX).ok()?;
    Some(rest.to_string_lossy().replace('\\', "/"))
}

fn disk_key(path: &Path) -> FileKey {
    FileKey::Disk(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
}

#[cfg(test)]
mod tests;
