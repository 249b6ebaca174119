//! The `//::` annotations of Viper's test corpus (see `spec/test-annotations.md`).
//!
//! A line whose text, after leading blanks, starts with `//::` holds one annotation. It
//! applies to the next line that is neither blank nor a `//` comment (annotations are such
//! comments, so several stack above one line). `// //:: ...` is a comment, not an annotation.

/// One annotation, resolved to the line it applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    pub kind: AnnotationKind,
    /// 1-based line of the `//::` comment itself.
    pub written_on: u32,
    /// 1-based line it applies to; `None` if no code line follows.
    pub applies_to: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnnotationKind {
    /// `ExpectedOutput(id)`: an error with this id must be reported on the line.
    Expected(String),
    /// `UnexpectedOutput(id, /backend/issue/n/)`: a back end wrongly reports this error.
    Unexpected { id: String, issue: String },
    /// `MissingOutput(id, /backend/issue/n/)`: a back end fails to report this error.
    Missing { id: String, issue: String },
    /// `IgnoreOthers`: other errors on the line do not count.
    IgnoreOthers,
    /// `IgnoreFile(/backend/issue/n/)`: a back end cannot run the file (it still counts).
    IgnoreFile(String),
}

/// A `//::` line that does not follow the annotation syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub line: u32,
    pub text: String,
}

/// All annotations of a file, in order, and the `//::` lines that could not be read.
pub fn parse(text: &str) -> (Vec<Annotation>, Vec<Malformed>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut annotations = Vec::new();
    let mut malformed = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(body) = line.trim_start().strip_prefix("//::") else {
            continue;
        };
        let written_on = index as u32 + 1;
        match parse_kind(body.trim()) {
            Some(kind) => {
                let applies_to = lines[index + 1..]
                    .iter()
                    .position(|l| is_code(l))
                    .map(|offset| written_on + 1 + offset as u32);
                annotations.push(Annotation {
                    kind,
                    written_on,
                    applies_to,
                });
            }
            None => malformed.push(Malformed {
                line: written_on,
                text: line.trim().to_string(),
            }),
        }
    }
    (annotations, malformed)
}

fn is_code(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.starts_with("//")
}

fn parse_kind(body: &str) -> Option<AnnotationKind> {
    if body == "IgnoreOthers" {
        return Some(AnnotationKind::IgnoreOthers);
    }
    let open = body.find('(')?;
    let name = body[..open].trim();
    let args = body[open + 1..].trim_end().strip_suffix(')')?;
    let args: Vec<String> = args.split(',').map(|a| a.trim().to_string()).collect();
    let valid_id = |id: &str| {
        !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '_'))
    };
    match (name, args.as_slice()) {
        ("ExpectedOutput", [id]) if valid_id(id) => Some(AnnotationKind::Expected(id.clone())),
        ("UnexpectedOutput", [id, issue]) if valid_id(id) => Some(AnnotationKind::Unexpected {
            id: id.clone(),
            issue: issue.clone(),
        }),
        ("MissingOutput", [id, issue]) if valid_id(id) => Some(AnnotationKind::Missing {
            id: id.clone(),
            issue: issue.clone(),
        }),
        ("IgnoreFile", [issue]) => Some(AnnotationKind::IgnoreFile(issue.clone())),
        _ => None,
    }
}

/// Whether a reported id satisfies an expected one: equal, or the expected id names only the
/// error (`assert.failed`) and the reported one adds a reason (`assert.failed:assertion.false`).
pub fn id_matches(expected: &str, reported: &str) -> bool {
    expected == reported
        || (!expected.contains(':')
            && reported
                .strip_prefix(expected)
                .is_some_and(|rest| rest.starts_with(':')))
}

/// The error part of an id: `assert.failed` for `assert.failed:assertion.false`.
pub fn error_part(id: &str) -> &str {
    id.split_once(':').map_or(id, |(error, _)| error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_apply_to_the_next_code_line() {
        let text = "\
method m() {
  //:: ExpectedOutput(assert.failed:assertion.false)
  //::UnexpectedOutput(assert.failed:assertion.false, /silicon/issue/1/)

  // a comment
  assert false
}
";
        let (annotations, malformed) = parse(text);
        assert!(malformed.is_empty());
        assert_eq!(annotations.len(), 2);
        assert_eq!(
            annotations[0],
            Annotation {
                kind: AnnotationKind::Expected("assert.failed:assertion.false".into()),
                written_on: 2,
                applies_to: Some(6),
            }
        );
        assert_eq!(
            annotations[1].kind,
            AnnotationKind::Unexpected {
                id: "assert.failed:assertion.false".into(),
                issue: "/silicon/issue/1/".into()
            }
        );
        assert_eq!(annotations[1].applies_to, Some(6));
    }

    #[test]
    fn all_kinds_are_read() {
        let text = "//:: IgnoreFile(/carbon/issue/438/)\n\
                    //:: IgnoreOthers\n\
                    //:: MissingOutput(wand.not.wellformed, /carbon/issue/105/)\n\
                    //:: ExpectedOutput(parser.error)\n\
                    x\n";
        let (annotations, _) = parse(text);
        let kinds: Vec<_> = annotations.iter().map(|a| a.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                AnnotationKind::IgnoreFile("/carbon/issue/438/".into()),
                AnnotationKind::IgnoreOthers,
                AnnotationKind::Missing {
                    id: "wand.not.wellformed".into(),
                    issue: "/carbon/issue/105/".into()
                },
                AnnotationKind::Expected("parser.error".into()),
            ]
        );
        assert!(annotations.iter().all(|a| a.applies_to == Some(5)));
    }

    #[test]
    fn commented_out_annotations_and_trailing_ones_do_not_count() {
        let text = "//  //:: ExpectedOutput(assert.failed)\n\
                    ////:: ExpectedOutput(assert.failed)\n\
                    x // currently works! //:: ExpectedOutput(assert.failed)\n";
        let (annotations, malformed) = parse(text);
        assert!(annotations.is_empty());
        assert!(malformed.is_empty());
    }

    #[test]
    fn malformed_and_dangling_annotations_are_visible() {
        let (annotations, malformed) = parse("//:: ExpectedOutput(\n//:: ExpectedOutput(a.b)\n");
        assert_eq!(
            malformed,
            [Malformed {
                line: 1,
                text: "//:: ExpectedOutput(".into()
            }]
        );
        assert_eq!(annotations[0].applies_to, None);
    }

    #[test]
    fn ids_match_with_or_without_reason() {
        assert!(id_matches("assert.failed", "assert.failed:assertion.false"));
        assert!(id_matches(
            "assert.failed:assertion.false",
            "assert.failed:assertion.false"
        ));
        assert!(!id_matches(
            "assert.failed:assertion.false",
            "assert.failed"
        ));
        assert!(!id_matches("assert.failed", "assert.failedx:y"));
        assert!(!id_matches(
            "assert.failed:receiver.null",
            "assert.failed:assertion.false"
        ));
        assert_eq!(error_part("a.b:c"), "a.b");
    }
}
