//! Assert-false probes: a permanent guard against unsound verdicts.
//!
//! A verified program says nothing about a point that cannot be reached, so each method that
//! Germanium verifies is run again with `assert false` inserted at one program point at a
//! time, and the assertion must be reported: a probe that verifies means Germanium believes
//! the point unreachable. The points come from the syntax tree: after each call, `fold`,
//! `unfold`, `exhale`, `inhale`, `package`, `apply`, field assignment and loop, and at the end
//! of each method body. A verified probe is a failure unless
//!
//! - it is *dominated*: an earlier probe on every path to it (an earlier statement of an
//!   enclosing block, or the method's entry) verified too, so it is unreachable for the same
//!   reason (not used in methods with `goto`, where a label may be reached from anywhere);
//! - the syntax says it is dead code: it follows `inhale false`, `assume false`, an
//!   `assert false` the method verifies with, a `goto`, a `while (true)` loop, or an `if`
//!   both of whose branches end so, with no label in between; or
//! - `tests/corpus/probes-unreachable.txt` lists it with a reason checked by hand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use germanium_driver::{Backend, MemberFilter, Mode, Options};
use germanium_syntax::ast::{Block, ExprKind, ItemKind, NodeIdGen, Stmt, StmtKind};
use germanium_syntax::{FileId, Span};

/// Where a probe goes and what precedes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The method the probe is in.
    pub method: String,
    /// The byte offset where `assert false` is inserted.
    pub offset: usize,
    /// The line (1-based) of the original program the probe follows: the statement's last
    /// line, or for the entry probe the line of the body's `{`.
    pub line: u32,
    /// What the probe follows: `call`, `fold`, ..., `end` of the body, `entry`.
    pub after: &'static str,
    /// The probes (indices into the same list) of which at least one is on every path to
    /// this one, nearest first.
    pub dominators: Vec<usize>,
    /// Why the syntax alone makes it dead code, if it does (see [`dead_after`]).
    pub dead_code: Option<&'static str>,
}

impl Probe {
    /// The program with this probe inserted, and the line of the inserted assertion.
    pub fn insert_into(&self, text: &str) -> (String, u32) {
        let (before, after) = text.split_at(self.offset);
        let line = before.matches('\n').count() as u32 + 2;
        (format!("{before}\nassert false\n{after}"), line)
    }
}

/// The probes of a program text, in source order; none if it does not parse.
pub fn probe_points(text: &str) -> Vec<Probe> {
    let mut ids = NodeIdGen::default();
    let (items, diagnostics) = germanium_syntax::parse_file(FileId(0), text, &mut ids);
    if diagnostics.iter().any(|d| d.is_error()) {
        return Vec::new();
    }
    let mut walker = Walker {
        text,
        probes: Vec::new(),
    };
    for item in &items {
        let ItemKind::Method(method) = &item.kind else {
            continue;
        };
        let Some(body) = &method.body else {
            continue;
        };
        let uses_goto = block_uses_goto(body);
        let name = method.name.name.clone();
        let entry = walker.push(&name, body.span.start as usize + 1, "entry", vec![], None);
        let dominators = if uses_goto { vec![] } else { vec![entry] };
        let (end_dominators, dead) = walker.block(&name, body, dominators, uses_goto, None);
        let end = body.span.end.saturating_sub(1) as usize;
        walker.push(&name, end, "end", end_dominators, dead);
    }
    walker.probes
}

struct Walker<'t> {
    text: &'t str,
    probes: Vec<Probe>,
}

impl Walker<'_> {
    fn push(
        &mut self,
        method: &str,
        offset: usize,
        after: &'static str,
        dominators: Vec<usize>,
        dead_code: Option<&'static str>,
    ) -> usize {
        let line = self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count() as u32
            + 1;
        self.probes.push(Probe {
            method: method.to_string(),
            offset,
            line,
            after,
            dominators,
            dead_code,
        });
        self.probes.len() - 1
    }

    /// Adds the probes of `block`, each dominated by `dominators` and the probes of earlier
    /// statements, dead code from its start if `dead` says why; returns the dominators of
    /// the point after the block and whether it is dead code.
    fn block(
        &mut self,
        method: &str,
        block: &Block,
        mut dominators: Vec<usize>,
        uses_goto: bool,
        mut dead: Option<&'static str>,
    ) -> (Vec<usize>, Option<&'static str>) {
        for stmt in &block.stmts {
            match &stmt.kind {
                // A `goto` may arrive here.
                StmtKind::Label(..) => dead = None,
                StmtKind::If {
                    then, otherwise, ..
                } => {
                    let (_, then_dead) =
                        self.block(method, then, dominators.clone(), uses_goto, dead);
                    if let Some(b) = otherwise {
                        let (_, else_dead) =
                            self.block(method, b, dominators.clone(), uses_goto, dead);
                        if then_dead.is_some() && else_dead.is_some() {
                            dead = dead.or(Some("after an if both of whose branches end dead"));
                        }
                    }
                }
                StmtKind::Block(b) => {
                    (dominators, dead) = self.block(method, b, dominators, uses_goto, dead);
                }
                StmtKind::While { body, .. } => {
                    self.block(method, body, dominators.clone(), uses_goto, dead);
                }
                _ => {}
            }
            if let Some(after) = probe_kind(stmt) {
                let offset = self.after_statement(stmt.span);
                let why = dead.or_else(|| dead_after(stmt));
                let index = self.push(method, offset, after, dominators.clone(), why);
                if !uses_goto {
                    dominators.insert(0, index);
                }
            }
            dead = dead.or_else(|| dead_after(stmt));
        }
        (dominators, dead)
    }

    /// The offset just after the statement at `span`, past a `;` that ends it.
    fn after_statement(&self, span: Span) -> usize {
        let end = span.end as usize;
        let rest = &self.text[end..];
        let skipped = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if rest[skipped..].starts_with(';') {
            end + skipped + 1
        } else {
            end
        }
    }
}

/// The kind of statement a probe follows, if it is one that gets a probe.
fn probe_kind(stmt: &Stmt) -> Option<&'static str> {
    Some(match &stmt.kind {
        StmtKind::Call(..) => "call",
        StmtKind::Assign(targets, value) => {
            if matches!(value.kind, ExprKind::Call(..)) {
                "call"
            } else if targets
                .iter()
                .any(|t| matches!(t.kind, ExprKind::FieldAccess(..)))
            {
                "field assignment"
            } else {
                return None;
            }
        }
        StmtKind::Fold(_) => "fold",
        StmtKind::Unfold(_) => "unfold",
        StmtKind::Exhale(_) => "exhale",
        StmtKind::Inhale(_) => "inhale",
        StmtKind::Package(..) => "package",
        StmtKind::Apply(_) => "apply",
        StmtKind::While { .. } => "loop",
        _ => return None,
    })
}

/// Why the point after `stmt` is dead code by its syntax alone, if it is: `inhale false`,
/// `assume false`, `assert false` (in a method that verifies, as probes are only made in
/// those), `goto`, and a `while (true)` loop, which is left by no normal exit.
fn dead_after(stmt: &Stmt) -> Option<&'static str> {
    let is_false = |e: &germanium_syntax::ast::Expr| matches!(e.kind, ExprKind::BoolLit(false));
    match &stmt.kind {
        StmtKind::Inhale(e) if is_false(e) => Some("after inhale false"),
        StmtKind::Assume(e) if is_false(e) => Some("after assume false"),
        StmtKind::Assert(e) if is_false(e) => Some("after a verified assert false"),
        StmtKind::Goto(_) => Some("after a goto"),
        StmtKind::While { cond, .. } if matches!(cond.kind, ExprKind::BoolLit(true)) => {
            Some("after a loop on true")
        }
        _ => None,
    }
}

fn block_uses_goto(block: &Block) -> bool {
    block.stmts.iter().any(|s| match &s.kind {
        StmtKind::Goto(_) => true,
        StmtKind::If {
            then, otherwise, ..
        } => block_uses_goto(then) || otherwise.as_ref().is_some_and(block_uses_goto),
        StmtKind::While { body, .. } | StmtKind::Block(body) => block_uses_goto(body),
        _ => false,
    })
}

/// What became of one probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The inserted assertion was reported: the point is reachable as far as Germanium knows.
    Reported,
    /// The method verified with the assertion in it.
    Verified,
    /// Germanium did not finish the method (an internal error), or the probe made the
    /// program ill-formed: it says nothing either way.
    Inconclusive(String),
    /// Not run: outside the sample, or in a method that does not verify as it is.
    NotRun,
}

/// Why a verified probe is not a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Excuse {
    /// An earlier probe on every path to it verified.
    Dominated,
    /// Dead code by the syntax alone, for this reason (see [`dead_after`]).
    DeadCode(&'static str),
    /// Listed by hand, with this reason.
    Listed(String),
}

/// One probe run.
#[derive(Clone, Debug)]
pub struct ProbeResult {
    /// The corpus name of the file (`viper-tests/...`) or its path.
    pub file: String,
    pub probe: Probe,
    pub outcome: Outcome,
}

/// The options a probe run uses: verification of one method only, one worker. The VCG gets
/// a fifth of the default budget per query: a probe asks whether `false` is proved, which an
/// inconsistent state gives at once, while a consistent one can spend the whole budget
/// failing to find a model (a path through many unfolded disjunctions), which is reported
/// as a failure either way.
fn options(imports: &[PathBuf], method: Option<&str>, backend: Backend) -> Options {
    let mut options = Options::new(Mode::Verify);
    options.import_paths = imports.to_vec();
    options.backend = backend;
    if backend == Backend::Vcg {
        options.timeout = Some(std::time::Duration::from_secs(1));
    }
    if let Some(method) = method {
        let wanted = method.to_string();
        options.members = Some(MemberFilter(std::sync::Arc::new(move |name: &str| {
            name == wanted
        })));
    }
    options
}

/// Whether `method` of the program `text` (the contents of `path`) verifies as it is,
/// with no error anywhere: only then do its probes say something.
pub fn method_verifies(
    path: &Path,
    text: &str,
    method: &str,
    imports: &[PathBuf],
    backend: Backend,
) -> bool {
    let report = germanium_driver::run_text(
        path,
        text.to_string(),
        &options(imports, Some(method), backend),
    );
    !report.diagnostics.iter().any(|d| d.is_error())
}

/// Runs one probe of the program `text` (the contents of `path`).
pub fn run_probe(
    path: &Path,
    text: &str,
    probe: &Probe,
    imports: &[PathBuf],
    backend: Backend,
) -> Outcome {
    let (probed, line) = probe.insert_into(text);
    let report = germanium_driver::run_text(
        path,
        probed,
        &options(imports, Some(&probe.method), backend),
    );
    let main = crate::compare::canonical(path);
    let in_main = |d: &germanium_syntax::Diagnostic| {
        crate::compare::canonical(&report.sources.get(d.span.file).path) == main
    };
    let errors: Vec<&germanium_syntax::Diagnostic> =
        report.diagnostics.iter().filter(|d| d.is_error()).collect();
    if let Some(d) = errors.iter().find(|d| d.id.starts_with("internal")) {
        return Outcome::Inconclusive(format!("{}: {}", d.id, d.message));
    }
    if let Some(d) = errors.iter().find(|d| crate::compare::is_front_end(&d.id)) {
        return Outcome::Inconclusive(format!("{}: {}", d.id, d.message));
    }
    let reported = errors
        .iter()
        .any(|d| in_main(d) && report.sources.start(d.span).line == line);
    if reported {
        Outcome::Reported
    } else {
        Outcome::Verified
    }
}

/// Reads the hand-checked list: lines `name:LINE kind  # reason` (blank lines and lines
/// starting with `#` are comments).
pub fn read_listed(path: &Path) -> BTreeMap<(String, u32, String), String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
        let entry = entry.trim();
        let Some((place, kind)) = entry.split_once(' ') else {
            continue;
        };
        let Some((name, number)) = place.rsplit_once(':') else {
            continue;
        };
        let Ok(number) = number.parse::<u32>() else {
            continue;
        };
        out.insert(
            (name.to_string(), number, kind.trim().to_string()),
            reason.trim().to_string(),
        );
    }
    out
}

/// Why each verified probe of one file's `results` is excused; `None` for a failure and
/// for every probe that did not verify.
pub fn excuses(
    results: &[ProbeResult],
    listed: &BTreeMap<(String, u32, String), String>,
) -> Vec<Option<Excuse>> {
    let verified = |i: usize| results.get(i).map(|r| &r.outcome) == Some(&Outcome::Verified);
    results
        .iter()
        .map(|r| {
            let key = (r.file.clone(), r.probe.line, r.probe.after.to_string());
            if r.outcome != Outcome::Verified {
                None
            } else if let Some(why) = r.probe.dead_code {
                Some(Excuse::DeadCode(why))
            } else if r.probe.dominators.iter().any(|&d| verified(d)) {
                Some(Excuse::Dominated)
            } else {
                listed.get(&key).map(|why| Excuse::Listed(why.clone()))
            }
        })
        .collect()
}

/// A deterministic sample: the probes whose place hashes to 0 modulo `one_in` (FNV-1a over
/// the file's name and the probe's line and kind, so the sample does not move when other
/// files change).
pub fn sampled(file: &str, probe: &Probe, one_in: u64) -> bool {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let key = format!("{file}:{}:{}", probe.line, probe.after);
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash.is_multiple_of(one_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "field f: Int\n\
        method m(x: Ref)\n  requires acc(x.f)\n{\n  x.f := 1; inhale false\n  if (true) {\n    fold P(x)\n  }\n  while (false) { exhale acc(x.f) }\n}\n";

    #[test]
    fn probes_follow_the_statements_of_the_syntax_tree() {
        let probes = probe_points(PROGRAM);
        let kinds: Vec<&str> = probes.iter().map(|p| p.after).collect();
        assert_eq!(
            kinds,
            [
                "entry",
                "field assignment",
                "inhale",
                "fold",
                "exhale",
                "loop",
                "end"
            ]
        );
        // After `x.f := 1;`, past its semicolon.
        let (probed, line) = probes[1].insert_into(PROGRAM);
        assert!(
            probed.contains("x.f := 1;\nassert false\n inhale false"),
            "{probed}"
        );
        assert_eq!(probed.lines().nth(line as usize - 1), Some("assert false"));
        assert_eq!(probes[2].dead_code, Some("after inhale false"));
        // Dead code goes on into the `if` and past the loop.
        assert_eq!(probes[6].dead_code, Some("after inhale false"));
    }

    #[test]
    fn dominators_are_earlier_statements_on_every_path() {
        let probes = probe_points(PROGRAM);
        // The fold inside the `if` is dominated by the inhale, the assignment and the entry.
        assert_eq!(probes[3].dominators, [2, 1, 0]);
        // The loop body's exhale is dominated by the same, not by the fold in the branch.
        assert_eq!(probes[4].dominators, [2, 1, 0]);
        // After the loop: the loop probe too, not the exhale inside it.
        assert_eq!(probes[6].dominators, [5, 2, 1, 0]);
    }

    #[test]
    fn a_method_with_goto_has_no_dominators() {
        let text = "method m() {\n  goto l\n  inhale true\n  label l\n  exhale true\n}\n";
        let probes = probe_points(text);
        assert!(probes.iter().all(|p| p.dominators.is_empty()));
        // Dead after the goto, live again after the label.
        let dead: Vec<Option<&str>> = probes.iter().map(|p| p.dead_code).collect();
        assert_eq!(dead, [None, Some("after a goto"), None, None]);
    }

    #[test]
    fn the_listed_reasons_are_read_by_place_and_kind() {
        let dir = std::env::temp_dir().join(format!("probes-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("list.txt");
        std::fs::write(
            &path,
            "# comment\nviper-tests/a.vpr:12 call  # callee ensures false\n",
        )
        .unwrap();
        let listed = read_listed(&path);
        assert_eq!(
            listed.get(&("viper-tests/a.vpr".into(), 12, "call".into())),
            Some(&"callee ensures false".to_string())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
