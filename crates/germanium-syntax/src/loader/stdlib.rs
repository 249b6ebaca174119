//! Germanium's built-in standard library: the files Viper programs import with
//! `import <decreases/int.vpr>` and similar, embedded in the binary so that no installation
//! directory is needed. The texts are Germanium's own; they declare the names Viper's library
//! declares (`WellFoundedOrder`, `decreasing`, `bounded`, `<Type>WellFoundedOrder`,
//! `PredicateInstance`, `nestedPredicates`, `contains`).

/// Prefix of the paths under which library files appear in the [`crate::SourceMap`].
pub const STD_PREFIX: &str = "<std>";

/// `(path below the library root, text)` of every library file.
const FILES: &[(&str, &str)] = &[
    (
        "adt/contains.vpr",
        include_str!("../../stdlib/adt/contains.vpr"),
    ),
    (
        "adt/derives.vpr",
        include_str!("../../stdlib/adt/derives.vpr"),
    ),
    (
        "decreases/all.vpr",
        include_str!("../../stdlib/decreases/all.vpr"),
    ),
    (
        "decreases/bool.vpr",
        include_str!("../../stdlib/decreases/bool.vpr"),
    ),
    (
        "decreases/declaration.vpr",
        include_str!("../../stdlib/decreases/declaration.vpr"),
    ),
    (
        "decreases/int.vpr",
        include_str!("../../stdlib/decreases/int.vpr"),
    ),
    (
        "decreases/multiset.vpr",
        include_str!("../../stdlib/decreases/multiset.vpr"),
    ),
    (
        "decreases/perm.vpr",
        include_str!("../../stdlib/decreases/perm.vpr"),
    ),
    (
        "decreases/predicate_instance.vpr",
        include_str!("../../stdlib/decreases/predicate_instance.vpr"),
    ),
    (
        "decreases/rational.vpr",
        include_str!("../../stdlib/decreases/rational.vpr"),
    ),
    (
        "decreases/ref.vpr",
        include_str!("../../stdlib/decreases/ref.vpr"),
    ),
    (
        "decreases/seq.vpr",
        include_str!("../../stdlib/decreases/seq.vpr"),
    ),
    (
        "decreases/set.vpr",
        include_str!("../../stdlib/decreases/set.vpr"),
    ),
    (
        "predicateinstance/pi.vpr",
        include_str!("../../stdlib/predicateinstance/pi.vpr"),
    ),
];

/// The text of library file `path` (e.g. `decreases/int.vpr`), after normalising `.` and `..`
/// components; `None` when there is no such file or the path leaves the library root.
pub fn lookup(path: &str) -> Option<(String, &'static str)> {
    let normal = normalise(path)?;
    FILES
        .iter()
        .find(|(name, _)| *name == normal)
        .map(|(name, text)| (name.to_string(), *text))
}

/// All library paths, for documentation and tests.
pub fn paths() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|(name, _)| *name)
}

/// Resolves `.` and `..` in a `/`-separated relative path; `None` if it climbs above the root
/// or is absolute.
fn normalise(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_files_and_normalises_paths() {
        assert!(lookup("decreases/int.vpr").is_some());
        assert_eq!(
            lookup("decreases/../adt/derives.vpr").unwrap().0,
            "adt/derives.vpr"
        );
        assert!(lookup("../decreases/int.vpr").is_none());
        assert!(lookup("/decreases/int.vpr").is_none());
        assert!(lookup("decreases/nat.vpr").is_none());
    }

    #[test]
    fn declares_the_names_viper_programs_use() {
        let all: String = FILES.iter().map(|(_, text)| *text).collect();
        for name in [
            "domain WellFoundedOrder[T]",
            "function decreasing(arg1: T, arg2: T): Bool",
            "function bounded(arg1: T): Bool",
            "domain IntWellFoundedOrder",
            "domain PredicateInstance",
            "function nestedPredicates",
            "function contains(a: A, b: B): Bool",
        ] {
            assert!(all.contains(name), "library lacks `{name}`");
        }
    }
}
