//! Printing big shared subterms once: an assertion whose term holds the same large ground
//! subterm many times (a chain of permission amounts, each built from the one before, doubles
//! in printed size at every link while its node count grows by one) is printed with those
//! subterms bound by `let` at the top, so its text stays about as large as its graph.
//!
//! `let` is notation: Z3 reads `(let ((x t)) b)` as `b` with `t` for `x`, into the same shared
//! internal terms, so what the solver is asked does not change, only how much text it reads.
//! Only ground subterms without binders are bound (nothing in them can be captured), and
//! only big ones that occur more than once (small assertions print as before).
//!
//! Names are `%sN`: a user name never starts with `%` followed by a letter (its `%` is always
//! followed by two hex digits), a fresh name has `@`, and Z3's own names have `!`.

use std::collections::HashMap;

use crate::sort::Sort;
use crate::term::{FunDecl, Op, Term, TermKind};

/// Subterms at least this large (nodes, counted as printed) are worth a name when shared.
const MIN_SHARED_SIZE: u64 = 64;

/// The subterms of one term that get a `let` name.
pub(crate) struct Sharing<'a> {
    /// Node id → its structural class (equal subterms built apart share a class).
    class_of: HashMap<usize, u32>,
    /// Class → the binding's number.
    names: HashMap<u32, usize>,
    /// The bound subterms by level: those of level `k` mention only names of levels before.
    pub(crate) levels: Vec<Vec<&'a Term>>,
}

impl Sharing<'_> {
    /// The name of `term` if it is bound.
    pub(crate) fn name(&self, term: &Term) -> Option<String> {
        let class = self.class_of.get(&term.node_id())?;
        self.names.get(class).map(|n| format!("%s{n}"))
    }
}

/// A node without its children: with its children's classes, what makes two nodes equal.
/// Quantifiers and `let`s are their own class (never bound, never compared).
#[derive(PartialEq, Eq, Hash)]
enum Shape<'a> {
    Leaf(&'a TermKind),
    App(&'a FunDecl),
    Op(Op),
    Builtin(&'a str),
    Unique(usize),
}

fn shape(t: &Term) -> Shape<'_> {
    match t.kind() {
        TermKind::App(decl, _) => Shape::App(decl),
        TermKind::Op(op, _) => Shape::Op(*op),
        TermKind::Builtin(head, _) => Shape::Builtin(head),
        TermKind::Quantifier(_) | TermKind::Let(..) => Shape::Unique(t.node_id()),
        TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) | TermKind::Var(_) => {
            Shape::Leaf(t.kind())
        }
    }
}

/// What the walk knows of one class.
struct Facts<'a> {
    /// A node of the class (the one printed in its binding).
    term: &'a Term,
    /// No variable, quantifier or `let` inside (safe to move out of any binder).
    ground: bool,
    /// Printed size if nothing is bound (saturating).
    size: u64,
    /// How many times it is a child of a node of another class (each class counted once).
    uses: u32,
    /// The classes of its children.
    children: Vec<u32>,
    /// Its level if it is bound, else the highest level of bound subterms in it (0: none).
    height: usize,
}

/// The subterms of `term` worth binding, or `None` when there are none.
pub(crate) fn sharing(term: &Term) -> Option<Sharing<'_>> {
    // Post-order over distinct nodes, with an explicit stack (terms can be deep).
    let mut class_of: HashMap<usize, u32> = HashMap::new();
    let mut classes: HashMap<(Shape, &Sort, Vec<u32>), u32> = HashMap::new();
    let mut facts: Vec<Facts> = Vec::new();
    let mut names: HashMap<u32, usize> = HashMap::new();
    let mut levels: Vec<Vec<&Term>> = Vec::new();
    let mut stack: Vec<(&Term, bool)> = vec![(term, false)];
    while let Some((t, children_done)) = stack.pop() {
        if class_of.contains_key(&t.node_id()) {
            continue;
        }
        let kids = children(t);
        if !children_done {
            stack.push((t, true));
            for child in kids {
                if !class_of.contains_key(&child.node_id()) {
                    stack.push((child, false));
                }
            }
            continue;
        }
        let child_classes: Vec<u32> = kids.iter().map(|c| class_of[&c.node_id()]).collect();
        let key = (shape(t), t.sort(), child_classes);
        if let Some(&class) = classes.get(&key) {
            class_of.insert(t.node_id(), class);
            continue;
        }
        // A new class: its facts from its children's.
        let class = facts.len() as u32;
        let mut ground = !matches!(
            t.kind(),
            TermKind::Var(_) | TermKind::Quantifier(_) | TermKind::Let(..)
        );
        let mut size: u64 = 1;
        for &child in &key.2 {
            let f = &mut facts[child as usize];
            f.uses = f.uses.saturating_add(1);
            ground &= f.ground;
            size = size.saturating_add(f.size);
        }
        facts.push(Facts {
            term: t,
            ground,
            size,
            uses: 0,
            children: key.2.clone(),
            height: 0,
        });
        classes.insert(key, class);
        class_of.insert(t.node_id(), class);
    }
    // Decide bottom-up (classes are numbered children first): a class's level needs its
    // children's decisions.
    for class in 0..facts.len() {
        let f = &facts[class];
        let below = f.children.iter().map(|&c| facts[c as usize].height).max();
        let below = below.unwrap_or(0);
        let bound = f.ground && f.uses >= 2 && f.size >= MIN_SHARED_SIZE;
        let height = if bound { below + 1 } else { below };
        if bound {
            if levels.len() < height {
                levels.resize_with(height, Vec::new);
            }
            levels[height - 1].push(f.term);
            names.insert(class as u32, names.len() + 1);
        }
        facts[class].height = height;
    }
    if names.is_empty() {
        return None;
    }
    Some(Sharing {
        class_of,
        names,
        levels,
    })
}

/// The children of a node, triggers included.
fn children(t: &Term) -> Vec<&Term> {
    match t.kind() {
        TermKind::App(_, args) | TermKind::Op(_, args) | TermKind::Builtin(_, args) => {
            args.iter().collect()
        }
        TermKind::Quantifier(q) => std::iter::once(&q.body)
            .chain(q.triggers.iter().flatten())
            .collect(),
        TermKind::Let(bindings, body) => bindings
            .iter()
            .map(|(_, value)| value)
            .chain(std::iter::once(body))
            .collect(),
        TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) | TermKind::Var(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::command::Command;
    use crate::sort::Sort;
    use crate::symbol::Symbol;
    use crate::term::{FunDecl, Term};

    fn constant(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::Int))
    }

    /// `c - min(c, q)`: the amount left after taking at most `q` from `c`.
    fn link(c: Term, q: &Term) -> Term {
        Term::sub(
            c.clone(),
            Term::ite(Term::le(c.clone(), q.clone()), c, q.clone()),
        )
    }

    /// `links` links from `start`, each node built once (printed unshared, the text triples
    /// with each link).
    fn chain(start: Term, links: usize) -> Term {
        let q = constant("q");
        (0..links).fold(start, |c, _| link(c, &q))
    }

    /// The same chain with every occurrence built apart (equal, not the same nodes).
    fn chain_built_apart(start: &Term, links: usize) -> Term {
        if links == 0 {
            return start.clone();
        }
        let q = constant("q");
        let c = || chain_built_apart(start, links - 1);
        Term::sub(c(), Term::ite(Term::le(c(), q.clone()), c(), q))
    }

    #[test]
    fn small_assertions_print_as_before() {
        let assertion = Command::assert(link(constant("p"), &constant("q")));
        assert_eq!(assertion.to_string(), "(assert (- p (ite (<= p q) p q)))");
    }

    #[test]
    fn a_chain_that_triples_in_print_stays_small() {
        let term = Term::eq(chain(constant("p"), 40), Term::int(0));
        let text = Command::assert(term).to_string();
        assert!(text.starts_with("(assert (let ((%s1 "), "{text:.200}");
        assert!(text.len() < 20_000, "{} bytes", text.len());
    }

    #[test]
    fn equal_subterms_built_apart_are_bound_once_too() {
        let term = Term::eq(chain_built_apart(&constant("p"), 7), Term::int(0));
        let unshared = term.to_string().len();
        let shared = Command::assert(term).to_string().len();
        assert!(shared * 10 < unshared, "{shared} against {unshared}");
    }

    #[test]
    fn subterms_with_bound_variables_stay_in_place() {
        let x = Symbol::user("x");
        let body = Term::ge(chain(Term::var(x.clone(), Sort::Int), 12), Term::int(0));
        let text = Command::assert(Term::forall(vec![(x, Sort::Int)], body, vec![])).to_string();
        assert!(!text.contains("%s"), "{text:.200}");
    }
}
