//! The symbolic heap: a list of field and predicate chunks. Lookup that needs the solver
//! (receiver or argument equality) is done by the verifier; here are the syntactic parts.

use germanium_smt::Term;

use super::permission::Permission;

/// One heap chunk: `perm` permission to `receiver.field`, whose value is `value` (the
/// chunk's snapshot), or `perm` permission to the predicate instance `name(args)`, whose
/// snapshot `snap` stands for the values folded inside it.
#[derive(Clone, Debug, PartialEq)]
pub enum Chunk {
    Field {
        field: String,
        receiver: Term,
        value: Term,
        perm: Permission,
    },
    Predicate {
        name: String,
        args: Vec<Term>,
        snap: Term,
        perm: Permission,
    },
}

impl Chunk {
    /// The field's name, or the predicate's (Viper's names are global: they never clash).
    pub fn field(&self) -> &str {
        match self {
            Chunk::Field { field, .. } => field,
            Chunk::Predicate { name, .. } => name,
        }
    }

    pub fn is_field(&self) -> bool {
        matches!(self, Chunk::Field { .. })
    }

    /// The receiver of a field chunk (a predicate chunk's snapshot otherwise: callers only
    /// ask field chunks).
    pub fn receiver(&self) -> &Term {
        match self {
            Chunk::Field { receiver, .. } => receiver,
            Chunk::Predicate { snap, .. } => snap,
        }
    }

    /// The value (field) or snapshot (predicate).
    pub fn value(&self) -> &Term {
        match self {
            Chunk::Field { value, .. } => value,
            Chunk::Predicate { snap, .. } => snap,
        }
    }

    pub fn perm(&self) -> &Permission {
        match self {
            Chunk::Field { perm, .. } | Chunk::Predicate { perm, .. } => perm,
        }
    }

    pub fn set_perm(&mut self, amount: Permission) {
        match self {
            Chunk::Field { perm, .. } | Chunk::Predicate { perm, .. } => *perm = amount,
        }
    }

    pub fn set_value(&mut self, new_value: Term) {
        match self {
            Chunk::Field { value, .. } => *value = new_value,
            Chunk::Predicate { snap, .. } => *snap = new_value,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Heap {
    pub chunks: Vec<Chunk>,
}

impl Heap {
    pub fn new() -> Heap {
        Heap::default()
    }

    /// Indices of the chunks for `field`.
    pub fn of_field<'a>(&'a self, field: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.chunks
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.is_field() && c.field() == field)
            .map(|(i, _)| i)
    }

    /// Indices of the chunks of predicate `name`.
    pub fn of_predicate<'a>(&'a self, name: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.chunks
            .iter()
            .enumerate()
            .filter(move |(_, c)| matches!(c, Chunk::Predicate { name: n, .. } if n == name))
            .map(|(i, _)| i)
    }

    /// The chunk of `name` whose arguments are syntactically `args`.
    pub fn find_predicate_syntactic(&self, name: &str, args: &[Term]) -> Option<usize> {
        self.of_predicate(name).find(|&i| matches!(&self.chunks[i], Chunk::Predicate { args: a, .. } if a.as_slice() == args))
    }

    /// The chunk for `field` whose receiver is syntactically `receiver`.
    pub fn find_syntactic(&self, field: &str, receiver: &Term) -> Option<usize> {
        self.of_field(field)
            .find(|&i| self.chunks[i].receiver() == receiver)
    }

    pub fn push(&mut self, chunk: Chunk) -> usize {
        self.chunks.push(chunk);
        self.chunks.len() - 1
    }

    /// Drops chunks whose permission is literally zero.
    pub fn drop_empty(&mut self) {
        self.chunks.retain(|c| !c.perm().is_literally_none());
    }

    /// Every receiver term in the heap.
    pub fn receivers(&self) -> Vec<Term> {
        let mut out: Vec<Term> = Vec::new();
        for c in self.chunks.iter().filter(|c| c.is_field()) {
            if !out.contains(c.receiver()) {
                out.push(c.receiver().clone());
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
        heap.push(Chunk::Field {
            field: "f".into(),
            receiver: r("x"),
            value: Term::int(1),
            perm: Permission::write(),
        });
        heap.push(Chunk::Field {
            field: "g".into(),
            receiver: r("x"),
            value: Term::int(2),
            perm: Permission::write(),
        });
        assert_eq!(heap.find_syntactic("g", &r("x")), Some(1));
        assert_eq!(heap.find_syntactic("f", &r("y")), None);
        assert_eq!(heap.of_field("f").count(), 1);
    }

    #[test]
    fn empty_chunks_are_dropped() {
        let mut heap = Heap::new();
        heap.push(Chunk::Field {
            field: "f".into(),
            receiver: r("x"),
            value: Term::int(1),
            perm: Permission::none(),
        });
        heap.push(Chunk::Field {
            field: "f".into(),
            receiver: r("y"),
            value: Term::int(1),
            perm: Permission::write(),
        });
        heap.drop_empty();
        assert_eq!(heap.chunks.len(), 1);
        assert_eq!(heap.receivers(), vec![r("y")]);
    }
}
