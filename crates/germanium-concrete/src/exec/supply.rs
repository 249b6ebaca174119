//! Packages run Viper's own way, where no left-hand side is compatible with the whole state:
//! the package's state starts with the left-hand side alone, and whatever its proof script
//! and right-hand side take that it lacks is moved in from the state around it (the
//! supplier; for a package inside a package, the outer package's state first, then the
//! state around that). The footprint is what was moved. Where a move makes the package's
//! state inconsistent (a location more than whole, or held with two values) the rest of the
//! package runs in no state at all: it holds, and what was moved until then, that move too,
//! stays taken (Viper notices the inconsistency only once the permission is moved).
//! Only where the structure of what the package takes reads no heap value (as Viper's
//! footprint is then one for all left-hand sides).

use num_rational::BigRational;
use num_traits::{One, Zero};

use super::wands::in_package;
use super::{out, Check, Choices, End, Machine, Outcome, Run, X};
use crate::eval::{conjuncts, Location, LHS_LABEL};
use crate::heap::Heap;
use crate::value::Value;
use germanium_syntax::ast::{Block, Expr};

/// The state a running package takes what it lacks from.
#[derive(Clone, Debug)]
pub(super) struct Supplier {
    heap: Heap,
    /// What was moved out of it, with its values.
    taken: Heap,
    /// Whether a move made the package's state inconsistent.
    inconsistent: bool,
    /// Whether a location moved in had another value in the package's state.
    two_values: bool,
}

/// How a package run Viper's way ended, its footprint given up by the state.
pub(super) enum Supplied {
    /// It holds on its own left-hand side: the footprint, with its values.
    Consistent(Heap),
    /// A move left no state: it holds of any left-hand side.
    Vacuous,
}

impl Machine<'_> {
    /// Whether a package is running Viper's own way (see the module's comment).
    pub(super) fn supplied(&self, run: &Run) -> bool {
        !run.supply.is_empty()
    }

    /// The package `lhs --* rhs` with its script, run with the current state as supplier:
    /// the footprint it took. The left-hand side's values are its own (the search picks
    /// them). Where a location moved in has another value in the package's state, Viper
    /// assumes them equal: whether that leaves no state depends on whether the left-hand
    /// side forces its value, which one run does not tell, so the state is left as it was
    /// and `None` says the footprint is not known.
    pub(super) fn package_supplied(
        &self,
        run: &mut Run,
        lhs: &Expr,
        rhs: &Expr,
        script: Option<&Block>,
        choices: &mut dyn Choices,
    ) -> X<Option<Supplied>> {
        let supplier = Supplier {
            taken: run.heap.values_only(),
            heap: run.heap.clone(),
            inconsistent: false,
            two_values: false,
        };
        let ((result, level), _) = in_package(run, run.heap.values_only(), |run| {
            run.supply.push(supplier);
            let result = self
                .inhale_times(run, lhs, &BigRational::one(), choices, false)
                .and_then(|()| self.resolve_pending(run, choices))
                .and_then(|()| {
                    run.labels.insert(LHS_LABEL.to_string(), run.heap.clone());
                    if let Some(b) = script {
                        self.block(run, b, choices)?;
                    }
                    self.exhale(run, rhs, Check::Package, true)
                });
            (result, run.supply.pop())
        });
        let Some(level) = level else {
            return out(Outcome::Unknown("a package's supplier was lost".into()));
        };
        match result {
            // The state stays as it was.
            Err(End::Out(Outcome::Infeasible)) if level.two_values => Ok(None),
            Ok(()) => {
                run.heap = level.heap;
                Ok(Some(Supplied::Consistent(level.taken)))
            }
            // The rest of the package ran in no state.
            Err(End::Out(Outcome::Infeasible)) if level.inconsistent => {
                run.heap = level.heap;
                Ok(Some(Supplied::Vacuous))
            }
            Err(e) => Err(e),
        }
    }

    /// Moves in, from the suppliers, what `asked` lacks of the first of `views` (parts of
    /// the state an exhale has not taken yet; the state itself where there is none); what
    /// is moved is added to the state and to every view.
    pub(super) fn supply(
        &self,
        run: &mut Run,
        views: &mut [&mut Heap],
        asked: &[(Location, BigRational)],
    ) -> X<()> {
        let (mut overfull, mut two_values) = (false, false);
        for (location, amount) in asked {
            let from: &Heap = match views.first() {
                Some(v) => v,
                None => &run.heap,
            };
            let mut lacking = amount - held(from, location);
            for i in (0..run.supply.len()).rev() {
                if lacking <= BigRational::zero() {
                    break;
                }
                let supplier = &mut run.supply[i];
                let moved = lacking.clone().min(held(&supplier.heap, location));
                if moved <= BigRational::zero() {
                    continue;
                }
                lacking -= &moved;
                let value = match location {
                    Location::Field(Value::Ref(Some(o)), f) => supplier.heap.value(*o, f).cloned(),
                    _ => None,
                };
                adjust(&mut supplier.heap, location, -moved.clone(), None);
                adjust(&mut supplier.taken, location, moved.clone(), value.as_ref());
                let (whole, same) = fits(&run.heap, location, &moved, value.as_ref());
                overfull |= !whole;
                two_values |= !same;
                adjust(&mut run.heap, location, moved.clone(), value.as_ref());
                for view in views.iter_mut() {
                    adjust(view, location, moved.clone(), value.as_ref());
                }
            }
        }
        if two_values {
            if let Some(top) = run.supply.last_mut() {
                top.two_values = true;
            }
            return out(Outcome::Infeasible);
        }
        if overfull {
            if let Some(top) = run.supply.last_mut() {
                top.inconsistent = true;
            }
            return out(Outcome::Infeasible);
        }
        Ok(())
    }

    /// Moves in what the assertion `e` (times `factor`) asks and `left` (the state where
    /// `None`) lacks, conjunct by conjunct, each read after the moves before; unknown where
    /// what a conjunct asks cannot be listed.
    pub(super) fn supply_assertion(
        &self,
        run: &mut Run,
        left: Option<&mut Heap>,
        e: &Expr,
        factor: &BigRational,
    ) -> X<()> {
        // What the conjuncts before have not asked yet.
        let mut unasked = left.as_deref().unwrap_or(&run.heap).clone();
        let mut left = left;
        for part in conjuncts(e) {
            if !self.impure(part) {
                continue;
            }
            let r = self.ev.asks_in(&self.state(run), part);
            let Some(asked) = self.evaluated(run, r, true)? else {
                return out(Outcome::Unknown(
                    "what a package's step takes cannot be listed".into(),
                ));
            };
            let asked: Vec<(Location, BigRational)> =
                asked.into_iter().map(|(l, a)| (l, a * factor)).collect();
            match left.as_deref_mut() {
                Some(l) => self.supply(run, &mut [&mut unasked, l], &asked)?,
                None => self.supply(run, &mut [&mut unasked], &asked)?,
            }
            for (location, amount) in &asked {
                adjust(&mut unasked, location, -amount.clone(), None);
            }
        }
        Ok(())
    }

    /// Moves in a wand with this identity, if the state holds none and a supplier does.
    pub(super) fn supply_wand(&self, run: &mut Run, key: &str) {
        if run.heap.holds_wand(key) {
            return;
        }
        for i in (0..run.supply.len()).rev() {
            if let Some(w) = run.supply[i].heap.take_wand(key) {
                run.supply[i].taken.wands.push(w.clone());
                run.heap.wands.push(w);
                return;
            }
        }
    }
}

fn held(heap: &Heap, location: &Location) -> BigRational {
    match location {
        Location::Field(Value::Ref(Some(o)), f) => heap.perm(*o, f),
        Location::Instance(p, args) => heap.instance(p, args),
        Location::Field(..) => BigRational::zero(),
    }
}

/// Whether `amount` of `location` added to `heap` leaves it at most whole, and whether with
/// the value it has there, if it is held.
fn fits(
    heap: &Heap,
    location: &Location,
    amount: &BigRational,
    value: Option<&Value>,
) -> (bool, bool) {
    match location {
        Location::Field(Value::Ref(Some(o)), f) => {
            let held = heap.perm(*o, f);
            let same = held.is_zero() || heap.value(*o, f) == value;
            (held + amount <= BigRational::one(), same)
        }
        _ => (true, true),
    }
}

/// Adds `amount` (which may be negative) of `location` to `heap`, with `value` if given.
pub(super) fn adjust(
    heap: &mut Heap,
    location: &Location,
    amount: BigRational,
    value: Option<&Value>,
) {
    match location {
        Location::Field(Value::Ref(Some(o)), f) => {
            let p = heap.perm(*o, f) + amount;
            match value {
                Some(v) => heap.set(*o, f, v.clone(), p),
                None => heap.set_perm(*o, f, p),
            }
        }
        Location::Instance(p, args) => {
            let a = heap.instance(p, args) + amount;
            heap.set_instance(p, args.clone(), a);
        }
        Location::Field(..) => {}
    }
}
