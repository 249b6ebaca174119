//! Mutants of existing programs (the corpus, front-end programs): a precondition or an
//! invariant weakened (dropped), a comparison flipped, a statement dropped, a statement put
//! under a branch. Each mutant is one change, on lines, so it stays readable; one that no
//! longer type-checks is counted as ill-formed and left.

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The programs mutants are made of: `.vpr` files under `roots`, at most `max_bytes` long,
/// without imports (a mutant is judged on its own), in path order.
pub fn sources(roots: &[PathBuf], max_bytes: u64) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        collect(root, max_bytes, &mut out);
    }
    out.sort();
    out
}

fn collect(dir: &Path, max_bytes: u64, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, max_bytes, out);
        } else if path.extension().is_some_and(|e| e == "vpr")
            && entry.metadata().is_ok_and(|m| m.len() <= max_bytes)
            && std::fs::read_to_string(&path).is_ok_and(|t| !t.contains("import "))
        {
            out.push(path);
        }
    }
}

/// One mutant: what was changed, and the text.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub change: String,
    pub text: String,
}

/// The mutant of `text` for `seed`, if the program has a place for the change chosen.
pub fn mutant(text: &str, seed: u64) -> Option<Mutant> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let lines: Vec<&str> = text.lines().collect();
    let kind = rng.random_range(0..5);
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| applies(kind, lines[i]))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let at = candidates[rng.random_range(0..candidates.len())];
    let line = lines[at];
    let (change, replacement) = match kind {
        0 | 1 => (
            format!("dropped line {}: {}", at + 1, line.trim()),
            String::new(),
        ),
        2 => {
            let flipped = flip_comparison(line, &mut rng)?;
            (format!("flipped a comparison on line {}", at + 1), flipped)
        }
        3 => (
            format!("dropped statement on line {}", at + 1),
            String::new(),
        ),
        _ => {
            let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
            let b = format!("adversary_b{at}");
            (
                format!("put line {} under a branch", at + 1),
                format!(
                    "{indent}var {b}: Bool\n{indent}if ({b}) {{ {} }}",
                    line.trim()
                ),
            )
        }
    };
    let mut out = String::with_capacity(text.len() + 64);
    for (i, l) in lines.iter().enumerate() {
        if i == at {
            out.push_str(&replacement);
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    Some(Mutant { change, text: out })
}

/// Whether mutation `kind` applies to `line`.
fn applies(kind: usize, line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("//") {
        return false;
    }
    match kind {
        // A whole precondition or invariant on its own line.
        0 => t.starts_with("requires ") && !t.ends_with("&&"),
        1 => t.starts_with("invariant ") && !t.ends_with("&&"),
        2 => COMPARISONS.iter().any(|op| line.contains(op)),
        3 | 4 => is_simple_statement(t),
        _ => false,
    }
}

/// A statement complete on its line that may be dropped or branched over.
fn is_simple_statement(t: &str) -> bool {
    let keyword = [
        "assert ", "fold ", "unfold ", "inhale ", "exhale ", "apply ",
    ]
    .iter()
    .any(|k| t.starts_with(k));
    let assignment = t.contains(":=") && !t.starts_with("var ");
    (keyword || assignment)
        && !t.ends_with('{')
        && !t.ends_with("&&")
        && !t.ends_with(',')
        && t.matches('(').count() == t.matches(')').count()
        && t.matches('{').count() == t.matches('}').count()
}

const COMPARISONS: [&str; 6] = [" <= ", " >= ", " == ", " != ", " < ", " > "];

/// `line` with one comparison replaced by another.
fn flip_comparison(line: &str, rng: &mut ChaCha8Rng) -> Option<String> {
    let mut places = Vec::new();
    for op in COMPARISONS {
        let mut from = 0;
        while let Some(i) = line[from..].find(op) {
            places.push((from + i, op));
            from += i + op.len();
        }
    }
    places.sort();
    places.dedup_by_key(|(i, _)| *i);
    if places.is_empty() {
        return None;
    }
    let (i, op) = places[rng.random_range(0..places.len())];
    let others: Vec<&str> = COMPARISONS.iter().copied().filter(|o| *o != op).collect();
    let new = others[rng.random_range(0..others.len())];
    Some(format!("{}{}{}", &line[..i], new, &line[i + op.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str =
        "method m(x: Int)\n  requires x > 0\n{\n  var y: Int := x\n  assert y >= 1\n}\n";

    #[test]
    fn mutants_change_one_line_and_are_reproducible() {
        let mut changed = std::collections::BTreeSet::new();
        for seed in 0..60 {
            let Some(m) = mutant(PROGRAM, seed) else {
                continue;
            };
            assert_eq!(mutant(PROGRAM, seed).map(|n| n.text), Some(m.text.clone()));
            assert_ne!(m.text, PROGRAM);
            changed.insert(m.change.split(' ').next().unwrap_or("").to_string());
        }
        for kind in ["dropped", "flipped", "put"] {
            assert!(changed.contains(kind), "no mutant {kind}: {changed:?}");
        }
    }

    #[test]
    fn flipping_keeps_the_rest_of_the_line() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let flipped = flip_comparison("assert a <= b", &mut rng).unwrap_or_default();
        assert!(flipped.starts_with("assert a ") && flipped.ends_with(" b"));
        assert_ne!(flipped, "assert a <= b");
    }
}
