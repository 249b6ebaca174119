//! Shrinking a program while a finding stays (delta debugging on lines): whole
//! declarations first, then runs of lines, halving the run length down to single lines,
//! until no single removal keeps the finding or the budget of tries is spent.

/// The smallest program found from `text` for which `keeps` holds (`keeps(text)` is
/// assumed), asking `keeps` at most `max_tries` times.
pub fn minimise(text: &str, max_tries: usize, keeps: &mut dyn FnMut(&str) -> bool) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let mut tries = 0;
    // Whole declarations first (a group of lines from one unindented line to the next).
    let mut at = 0;
    while at < lines.len() && tries < max_tries {
        let end = (at + 1..lines.len())
            .find(|&i| !lines[i].starts_with([' ', '\t', '{', '}']))
            .unwrap_or(lines.len());
        let candidate: Vec<String> = lines[..at].iter().chain(&lines[end..]).cloned().collect();
        tries += 1;
        if keeps(&join(&candidate)) {
            lines = candidate;
        } else {
            at = end;
        }
    }
    let mut run = (lines.len() / 2).max(1);
    loop {
        let mut removed_any = false;
        let mut at = 0;
        while at < lines.len() {
            if tries >= max_tries {
                return join(&lines);
            }
            let end = (at + run).min(lines.len());
            let candidate: Vec<String> = lines[..at].iter().chain(&lines[end..]).cloned().collect();
            tries += 1;
            if keeps(&join(&candidate)) {
                lines = candidate;
                removed_any = true;
            } else {
                at = end;
            }
        }
        if run == 1 && !removed_any {
            return join(&lines);
        }
        if !removed_any {
            run = (run / 2).max(1);
        }
    }
}

fn join(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_lines_the_finding_needs() {
        let text = "a\nb\nneeded one\nc\nd\nneeded two\ne\n";
        let mut asked = 0;
        let small = minimise(text, 1000, &mut |t| {
            asked += 1;
            t.contains("needed one") && t.contains("needed two")
        });
        assert_eq!(small, "needed one\nneeded two\n");
        assert!(asked < 40, "{asked} tries");
    }

    #[test]
    fn removes_whole_declarations() {
        let text =
            "field f: Int\nmethod a()\n{\n  assert true\n}\nmethod b()\n{\n  assert false\n}\n";
        let small = minimise(text, 1000, &mut |t| {
            // Only whole declarations may go (a method cut in half is not "well-formed").
            t.contains("assert false")
                && t.matches('{').count() == t.matches('}').count()
                && t.lines().filter(|l| l.starts_with("method")).count()
                    == t.lines().filter(|l| *l == "{").count()
        });
        assert_eq!(small, "method b()\n{\n  assert false\n}\n");
    }

    #[test]
    fn stops_at_the_budget() {
        let text = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let mut asked = 0;
        let _ = minimise(text, 3, &mut |_| {
            asked += 1;
            false
        });
        assert_eq!(asked, 3);
    }
}
