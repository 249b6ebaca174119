//! The explicit state of the lowering: the store, and per field a heap map and a permission
//! map (SMT arrays from references, one sort per field, no polymorphic maps), with the path
//! condition that reaches this point. States are values: a branch copies one, a join merges
//! two with fresh names.

use std::collections::{BTreeMap, HashMap};

use germanium_semantics::VarId;
use germanium_smt::{Sort, Term};

use crate::lower::Tables;
use crate::vc::Vc;

/// Heap and permission maps of every field and predicate, and which references are allocated (every
/// value in the heap or the store is; `new` gives one that is not yet).
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    pub heap: BTreeMap<String, Term>,
    pub mask: BTreeMap<String, Term>,
    pub allocated: Term,
}

#[derive(Clone, Debug)]
pub struct State {
    pub store: HashMap<VarId, Term>,
    pub memory: Memory,
    /// Memories at `old` and at labels.
    pub labels: HashMap<String, Memory>,
    /// Where this point is reached.
    pub reach: Term,
}

/// The label of the method's pre-state.
pub const OLD: &str = "old";

impl Memory {
    /// A memory with arbitrary values and no permission (a method's or a loop body's start).
    pub fn empty(vc: &mut Vc, t: &Tables<'_>) -> Memory {
        let mut heap = BTreeMap::new();
        let mut mask = BTreeMap::new();
        for (name, index, value) in t.maps() {
            let h = vc.fresh(&format!("H_{name}"), Sort::array(index.clone(), value));
            let m = vc.fresh(&format!("M_{name}"), Sort::array(index.clone(), Sort::Real));
            let r = Term::var(germanium_smt::Symbol::user("r"), index.clone());
            let at = Term::select(m.clone(), r.clone());
            vc.fact(Term::forall(
                vec![(germanium_smt::Symbol::user("r"), index)],
                Term::eq(at.clone(), Term::real(0, 1)),
                vec![vec![at]],
            ));
            heap.insert(name.clone(), h);
            mask.insert(name, m);
        }
        let allocated = vc.fresh("allocated", Sort::array(t.reference.clone(), Sort::Bool));
        Memory {
            heap,
            mask,
            allocated,
        }
    }

    /// Fresh allocation map that keeps every reference allocated now (a callee or loop
    /// iterations may allocate more).
    pub fn allocate_more(&mut self, vc: &mut Vc, reference: &Sort) {
        let later = vc.fresh("allocated", Sort::array(reference.clone(), Sort::Bool));
        vc.fact(grows(&self.allocated, &later, reference));
        self.allocated = later;
    }
}

/// `earlier ⊆ later` as allocation maps.
pub fn grows(earlier: &Term, later: &Term, reference: &Sort) -> Term {
    let o = Term::var(germanium_smt::Symbol::user("o"), reference.clone());
    let before = Term::select(earlier.clone(), o.clone());
    let after = Term::select(later.clone(), o.clone());
    Term::forall(
        vec![(germanium_smt::Symbol::user("o"), reference.clone())],
        Term::implies(before.clone(), after.clone()),
        vec![vec![before], vec![after]],
    )
}

/// One state from the two sides of a branch on `c` from one state: each differing part
/// is `c ? a : b` (equal to a side's value where that side was taken, and naming no more
/// than the sides and the condition do).
pub fn join_on(vc: &mut Vc, c: &Term, a: &State, b: &State) -> State {
    let reach = vc.either(&a.reach, &b.reach);
    let mut merge = |base: &str, x: &Term, y: &Term| -> Term {
        if x == y {
            return x.clone();
        }
        vc.define(base, Term::ite(c.clone(), x.clone(), y.clone()))
    };
    let mut joined = merge_states(a, b, &mut merge);
    joined.reach = reach;
    joined
}

/// One state from two that meet after the sides of a branch: equal parts stay, differing
/// ones get a fresh name equal to each side's value where that side was taken.
pub fn join(vc: &mut Vc, a: &State, b: &State) -> State {
    let reach = vc.either(&a.reach, &b.reach);
    let mut merge = |base: &str, x: &Term, y: &Term| -> Term {
        if x == y {
            return x.clone();
        }
        let v = vc.fresh(base, x.sort().clone());
        vc.fact(Term::implies(
            a.reach.clone(),
            Term::eq(v.clone(), x.clone()),
        ));
        vc.fact(Term::implies(
            b.reach.clone(),
            Term::eq(v.clone(), y.clone()),
        ));
        v
    };
    let mut joined = merge_states(a, b, &mut merge);
    joined.reach = reach;
    joined
}

/// The parts of two states merged by `merge` (the reach is left to the caller).
fn merge_states(a: &State, b: &State, merge: &mut dyn FnMut(&str, &Term, &Term) -> Term) -> State {
    let mut store = HashMap::new();
    let mut vars: Vec<&VarId> = a.store.keys().collect();
    vars.sort();
    for var in vars {
        if let (Some(x), Some(y)) = (a.store.get(var), b.store.get(var)) {
            store.insert(*var, merge("v", x, y));
        }
    }
    let mut memory = a.memory.clone();
    for (field, x) in &a.memory.heap {
        if let Some(y) = b.memory.heap.get(field) {
            memory.heap.insert(field.clone(), merge("H", x, y));
        }
    }
    for (field, x) in &a.memory.mask {
        if let Some(y) = b.memory.mask.get(field) {
            memory.mask.insert(field.clone(), merge("M", x, y));
        }
    }
    memory.allocated = merge("allocated", &a.memory.allocated, &b.memory.allocated);
    // Labels met on one side only are not reachable after the join.
    let mut labels = HashMap::new();
    for (name, m) in &a.labels {
        if b.labels.get(name) == Some(m) {
            labels.insert(name.clone(), m.clone());
        }
    }
    State {
        store,
        memory,
        labels,
        reach: a.reach.clone(),
    }
}
