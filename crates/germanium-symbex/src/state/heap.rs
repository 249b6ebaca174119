//! The symbolic heap: a list of chunks, each an amount of permission to one resource.
//! Lookups that need the solver (are two receivers or argument lists equal?) are in
//! `resources`; here is the plain data and its syntactic parts.

use germanium_smt::{FunDecl, Sort, Symbol, Term};

use super::permission::Permission;

/// What a chunk holds permission to. Viper's field and predicate names are global and never
/// clash. Code that treats kinds differently matches on this exhaustively, so a new kind
/// (quantified chunks, wands) makes the compiler point at every place to extend.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// The field of an object: the chunk's only argument is the receiver; its snapshot is
    /// the field's value.
    Field(String),
    /// An instance of a predicate: the chunk's arguments are the instance's; its snapshot
    /// stands for the values folded inside it.
    Predicate(String),
    /// A magic wand of one shape (the wand with its heap-independent parts as holes,
    /// named by `rules::wands`): the chunk's arguments are the holes' values; its snapshot
    /// says which values the right-hand side has for each left-hand side (see
    /// `rules::wands`). Two chunks of the same wand are two instances, never merged.
    Wand(String),
}

impl Resource {
    /// The field's or predicate's name.
    pub fn name(&self) -> &str {
        match self {
            Resource::Field(name) | Resource::Predicate(name) | Resource::Wand(name) => name,
        }
    }

    /// The most a state may hold of one location of this resource (fields: `write`;
    /// predicate instances: no bound).
    pub fn max_amount(&self) -> Option<Permission> {
        match self {
            Resource::Field(_) => Some(Permission::write()),
            Resource::Predicate(_) | Resource::Wand(_) => None,
        }
    }

    /// Whether two chunks of one location have the same value (fields and predicate
    /// instances; not wands, whose instances may have different footprints).
    pub fn values_agree(&self) -> bool {
        match self {
            Resource::Field(_) | Resource::Predicate(_) => true,
            Resource::Wand(_) => false,
        }
    }
}

/// One heap chunk: `perm` permission to `resource(args)`, whose snapshot is `snap`.
///
/// A *quantified* chunk (`vars` not empty) holds many locations at once: its `args` are the
/// variables `vars`, and `perm` and `snap` are terms over them, the amount held of and the
/// value at each location (the permission and value maps of quantified permissions). A
/// chunk of one location has no `vars`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub resource: Resource,
    pub vars: Vec<(Symbol, Sort)>,
    pub args: Vec<Term>,
    pub snap: Term,
    pub perm: Permission,
    /// For a quantified chunk, the constants its amount named when it was made (what it
    /// was made for, e.g. one array): a hint for choosing the chunk to take from first.
    pub made_for: Vec<Term>,
}

impl Chunk {
    /// `perm` of the one location `resource(args)`, whose snapshot is `snap`.
    pub fn at(resource: Resource, args: Vec<Term>, snap: Term, perm: Permission) -> Chunk {
        Chunk {
            resource,
            vars: Vec::new(),
            args,
            snap,
            perm,
            made_for: Vec::new(),
        }
    }

    /// `perm` of `receiver.field`, whose value is `value`.
    pub fn field(field: &str, receiver: Term, value: Term, perm: Permission) -> Chunk {
        Chunk::at(
            Resource::Field(field.to_string()),
            vec![receiver],
            value,
            perm,
        )
    }

    /// `perm` of the instance `name(args)` with snapshot `snap`.
    pub fn predicate(name: &str, args: Vec<Term>, snap: Term, perm: Permission) -> Chunk {
        Chunk::at(Resource::Predicate(name.to_string()), args, snap, perm)
    }

    /// Every location of `resource` at once: `perm` and `snap` are over `vars`, which the
    /// location's arguments are.
    pub fn quantified(
        resource: Resource,
        vars: Vec<(Symbol, Sort)>,
        snap: Term,
        perm: Permission,
    ) -> Chunk {
        let args = vars
            .iter()
            .map(|(v, sort)| Term::var(v.clone(), sort.clone()))
            .collect();
        let mut made_for = Vec::new();
        constants_in(&perm.0, &mut made_for);
        Chunk {
            resource,
            vars,
            args,
            snap,
            perm,
            made_for,
        }
    }

    pub fn is_quantified(&self) -> bool {
        !self.vars.is_empty()
    }
}

/// The constants (applications to no arguments) in `t`, each once.
pub fn constants_in(t: &Term, out: &mut Vec<Term>) {
    if let germanium_smt::TermKind::App(_, args) = t.kind() {
        if args.is_empty() {
            if !out.contains(t) {
                out.push(t.clone());
            }
            return;
        }
    }
    for c in t.children() {
        constants_in(c, out);
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Heap {
    pub chunks: Vec<Chunk>,
    /// Per field, the labels that tell apart the receivers of its full chunks.
    pub owners: Vec<Owners>,
}

/// Receivers of one field's chunks held in full at once are pairwise distinct. Instead of a
/// fact per pair, each gets a label: `function(receiver) = k` for the k-th, one fact per
/// chunk. Sound only while every labelled receiver is still held in full together with the
/// next one (`resources::add` checks this and starts a fresh `function` otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct Owners {
    pub resource: Resource,
    pub function: FunDecl,
    pub labelled: Vec<Term>,
}

impl Heap {
    pub fn new() -> Heap {
        Heap::default()
    }

    /// Indices of the chunks of `resource`.
    pub fn of<'a>(&'a self, resource: &'a Resource) -> impl Iterator<Item = usize> + 'a {
        self.chunks
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.resource == *resource)
            .map(|(i, _)| i)
    }

    /// The chunk of `resource` whose arguments are syntactically `args`.
    pub fn find_syntactic(&self, resource: &Resource, args: &[Term]) -> Option<usize> {
        self.of(resource)
            .find(|&i| !self.chunks[i].is_quantified() && self.chunks[i].args.as_slice() == args)
    }

    pub fn push(&mut self, chunk: Chunk) -> usize {
        self.chunks.push(chunk);
        self.chunks.len() - 1
    }

    /// Drops chunks whose permission is literally zero.
    pub fn drop_empty(&mut self) {
        self.chunks.retain(|c| !c.perm.is_literally_none());
    }

    /// Every object the heap holds a field of.
    pub fn receivers(&self) -> Vec<Term> {
        let mut out: Vec<Term> = Vec::new();
        for c in self.chunks.iter().filter(|c| !c.is_quantified()) {
            let receiver = match c.resource {
                Resource::Field(_) => c.args.first(),
                Resource::Predicate(_) | Resource::Wand(_) => None,
            };
            if let Some(r) = receiver.filter(|r| !out.contains(r)) {
                out.push(r.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::{FunDecl, Sort, Symbol};

    fn r(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::named("Ref")))
    }

    #[test]
    fn syntactic_lookup_by_field_and_receiver() {
        let mut heap = Heap::new();
        heap.push(Chunk::field("f", r("x"), Term::int(1), Permission::write()));
        heap.push(Chunk::field("g", r("x"), Term::int(2), Permission::write()));
        heap.push(Chunk::predicate(
            "g",
            vec![r("x")],
            Term::int(3),
            Permission::write(),
        ));
        let g = Resource::Field("g".into());
        assert_eq!(heap.find_syntactic(&g, &[r("x")]), Some(1));
        assert_eq!(heap.find_syntactic(&g, &[r("y")]), None);
        assert_eq!(heap.of(&Resource::Field("f".into())).count(), 1);
        assert_eq!(heap.of(&Resource::Predicate("g".into())).count(), 1);
    }

    #[test]
    fn empty_chunks_are_dropped() {
        let mut heap = Heap::new();
        heap.push(Chunk::field("f", r("x"), Term::int(1), Permission::none()));
        heap.push(Chunk::field("f", r("y"), Term::int(1), Permission::write()));
        heap.push(Chunk::predicate(
            "P",
            vec![r("z")],
            Term::int(1),
            Permission::write(),
        ));
        heap.drop_empty();
        assert_eq!(heap.chunks.len(), 2);
        assert_eq!(heap.receivers(), vec![r("y")]);
    }
}
