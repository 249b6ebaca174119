//! A finite heap: objects, the values of their fields, the permission held to each field
//! location, the predicate instances held with their amounts, and the magic wands held.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use num_rational::BigRational;
use num_traits::{One, Zero};

use germanium_semantics::VarId;
use germanium_syntax::ast::{Block, Expr};

use crate::value::Value;

/// An object, named `o1`, `o2`, ... in order of allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub u32);

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "o{}", self.0)
    }
}

/// The heap of a state. Field values are kept for every location that has one, held or
/// not (a folded predicate's locations keep theirs); permissions say what the state holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Heap {
    /// Objects `o1` to `o{objects}` exist.
    pub objects: u32,
    pub fields: BTreeMap<(ObjectId, String), Value>,
    pub perms: BTreeMap<(ObjectId, String), BigRational>,
    pub predicates: BTreeMap<(String, Vec<Value>), BigRational>,
    /// Magic wands held, one entry per instance, in the order they were got.
    pub wands: Vec<WandInstance>,
}

/// A magic wand held: its identity (see `eval::wands`) and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WandInstance {
    pub key: String,
    pub origin: WandOrigin,
}

/// Where a wand held came from, which says what applying it gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WandOrigin {
    /// Inhaled (a precondition, a postcondition, an `inhale`): its footprint is unknown,
    /// any one that makes it hold may be there.
    Inhaled,
    /// Packaged in this run, from this footprint (what the package took from the state,
    /// with the values it had then); applying it gives back exactly what the right-hand side
    /// takes from the left-hand side's state and the footprint.
    Packaged(Box<Heap>),
    /// Packaged in this run from a known footprint, but what applying it gives is computed
    /// by running the package again (a proof script, predicates or wands inside it): see
    /// `exec::replay`. Shared: heaps are cloned often, the syntax it keeps need not be.
    Replayed(Arc<Replay>),
    /// Packaged in this run, but applying it is not replayed exactly (its footprint is not
    /// known).
    Opaque,
}

/// What running a package again needs: its footprint (with the values it had then), the
/// wand and proof script as packaged, and the variables' values there.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub footprint: Heap,
    pub wand: Expr,
    pub script: Option<Block>,
    pub store: BTreeMap<VarId, Value>,
}

// Syntax trees compare structurally (they hold no floating-point values).
impl Eq for Replay {}

impl Heap {
    /// A new object, with no field values and no permissions.
    pub fn allocate(&mut self) -> ObjectId {
        self.objects += 1;
        ObjectId(self.objects)
    }

    /// Every object, in order.
    pub fn all_objects(&self) -> impl Iterator<Item = ObjectId> {
        (1..=self.objects).map(ObjectId)
    }

    /// Sets a field's value and the permission held to it.
    pub fn set(&mut self, object: ObjectId, field: &str, value: Value, perm: BigRational) {
        self.fields.insert((object, field.to_string()), value);
        self.set_perm(object, field, perm);
    }

    pub fn set_perm(&mut self, object: ObjectId, field: &str, perm: BigRational) {
        if perm.is_zero() {
            self.perms.remove(&(object, field.to_string()));
        } else {
            self.perms.insert((object, field.to_string()), perm);
        }
    }

    /// The permission held to `object.field`.
    pub fn perm(&self, object: ObjectId, field: &str) -> BigRational {
        self.perms
            .get(&(object, field.to_string()))
            .cloned()
            .unwrap_or_else(BigRational::zero)
    }

    pub fn value(&self, object: ObjectId, field: &str) -> Option<&Value> {
        self.fields.get(&(object, field.to_string()))
    }

    /// The amount of the predicate instance held.
    pub fn instance(&self, predicate: &str, args: &[Value]) -> BigRational {
        self.predicates
            .get(&(predicate.to_string(), args.to_vec()))
            .cloned()
            .unwrap_or_else(BigRational::zero)
    }

    /// Whether a wand with this identity is held.
    pub fn holds_wand(&self, key: &str) -> bool {
        self.wands.iter().any(|w| w.key == key)
    }

    /// Gives up one wand with this identity (the earliest got), if one is held.
    pub fn take_wand(&mut self, key: &str) -> Option<WandInstance> {
        let i = self.wands.iter().position(|w| w.key == key)?;
        Some(self.wands.remove(i))
    }

    pub fn set_instance(&mut self, predicate: &str, args: Vec<Value>, amount: BigRational) {
        if amount.is_zero() {
            self.predicates.remove(&(predicate.to_string(), args));
        } else {
            self.predicates
                .insert((predicate.to_string(), args), amount);
        }
    }

    /// This heap without its permissions, instances and wands: its values only.
    pub fn values_only(&self) -> Heap {
        Heap {
            objects: self.objects,
            fields: self.fields.clone(),
            ..Heap::default()
        }
    }

    /// What `after` lacks of this heap's permissions and instances, with this heap's values.
    pub fn taken_by(&self, after: &Heap) -> Heap {
        let mut d = self.values_only();
        for ((o, f), p) in &self.perms {
            let gone = p - after.perm(*o, f);
            if gone > BigRational::zero() {
                d.perms.insert((*o, f.clone()), gone);
            }
        }
        for ((name, args), p) in &self.predicates {
            let gone = p - after.instance(name, args);
            if gone > BigRational::zero() {
                d.predicates.insert((name.clone(), args.clone()), gone);
            }
        }
        d
    }

    /// Reduces this heap to what a package left of it (`left`: of each location, this
    /// heap's share of what is left, so that the left-hand side's is used first) and gives
    /// the footprint taken, with this heap's values.
    pub fn extract(&mut self, left: &Heap) -> Heap {
        let mut footprint = self.values_only();
        for ((o, f), p) in self.perms.clone() {
            let kept = p.clone().min(left.perm(o, &f));
            let gone = &p - &kept;
            if gone > BigRational::zero() {
                footprint.perms.insert((o, f.clone()), gone);
            }
            self.set_perm(o, &f, kept);
        }
        for ((name, args), p) in self.predicates.clone() {
            let kept = p.clone().min(left.instance(&name, &args));
            let gone = &p - &kept;
            if gone > BigRational::zero() {
                footprint
                    .predicates
                    .insert((name.clone(), args.clone()), gone);
            }
            self.set_instance(&name, args, kept);
        }
        // Wands: as many of each as are left, the earliest kept.
        let mut kept: Vec<WandInstance> = Vec::new();
        for w in std::mem::take(&mut self.wands) {
            let left_of_key = left.wands.iter().filter(|l| l.key == w.key).count();
            let kept_of_key = kept.iter().filter(|k| k.key == w.key).count();
            if kept_of_key < left_of_key {
                kept.push(w);
            } else {
                footprint.wands.push(w);
            }
        }
        self.wands = kept;
        footprint
    }

    /// Adds the field permissions of `given` with its values; `None` where a location would
    /// be held more than whole or with two values.
    pub fn add_fields(&mut self, given: &Heap) -> Option<()> {
        for ((o, f), p) in &given.perms {
            let value = given.value(*o, f)?.clone();
            let held = self.perm(*o, f);
            if !held.is_zero() && self.value(*o, f) != Some(&value) {
                return None;
            }
            let total = held + p;
            if total > BigRational::one() {
                return None;
            }
            self.set(*o, f, value, total);
        }
        Some(())
    }

    /// Gives up the permissions and instances of `footprint`.
    pub fn give_up(&mut self, footprint: &Heap) {
        for ((o, f), p) in &footprint.perms {
            let left = self.perm(*o, f) - p;
            self.set_perm(*o, f, left);
        }
        for ((name, args), p) in &footprint.predicates {
            let left = self.instance(name, args) - p;
            self.set_instance(name, args.clone(), left);
        }
    }
}
