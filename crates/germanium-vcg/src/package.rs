//! `package A --* B [proof]` with the sound package logic (seed 004): the wand must hold for
//! *every* state satisfying `A`, with *one* footprint taken from the state around.
//!
//! The witnesses of `A` are one symbolic state: `A` inhaled into a state holding nothing,
//! over the heap around, every location it holds getting a value of its own; its constants
//! and facts are recorded as a *region* of the VC (`Vc::begin_region`), so a term naming
//! one of them may differ between witnesses. The proof script and then `B` are taken from
//! that state on a path of its own (what the witnesses assume never reaches the code after
//! the package). Where a take finds too little, the missing amount is *extracted* from the
//! state around (seed 004's Extract):
//! - if the location, the amount missing and the conditions of the branches entered are
//!   the same for every witness, exactly that amount is taken (nothing where no state
//!   satisfies `A`: a wand with an inconsistent left-hand side is packaged for free);
//! - otherwise a footprint map is chosen, at most what is held and at least what this
//!   witness misses: one map for all witnesses, of which the code after the package knows
//!   only that it took no more than was held.
//!
//! Witnesses that disagree with the state around on a value it gave are dropped: the wand
//! need not hold for them. Nothing is havocked inside the package (its statements are ghost
//! code); the state around is, where it holds nothing any more, when the package is done.

use germanium_smt::{Sort, Symbol, Term, TermKind};
use germanium_syntax::ast::{BinaryOp, Block, Expr, ExprKind, Stmt};
use germanium_verifier::errors::ErrorContext;

use crate::lower::{unsupported, Lower, R};
use crate::state::{Memory, State};
use crate::wands::LHS;

/// A package being lowered.
#[derive(Clone, Debug)]
pub struct PackageFrame {
    /// The state around the package, less what was extracted so far.
    pub outer: Memory,
    /// Whether some state satisfies the left-hand side: the path of another witness, so
    /// that it is false where none does.
    nonempty: Term,
    /// The conditions of the branches entered since the package began.
    pub conditions: Vec<Term>,
    /// What was extracted, in order: map, location, amount.
    extracted: Vec<(String, Term, Term)>,
    /// Where in `extracted` each exhale under way began.
    exhales: Vec<usize>,
    /// The frame of the instance being made, and per heap map where its footprint's values
    /// are recorded (`WandShape::values`).
    instance: Term,
    values: std::collections::BTreeMap<String, germanium_smt::FunDecl>,
    /// The witnesses' masks before the left-hand side (holding nothing).
    nothing: std::collections::BTreeMap<String, Term>,
    /// The maps extracted from through a quantifier.
    quantified: std::collections::BTreeSet<String>,
    /// The wand being packaged (where what cannot be lowered is reported).
    span: germanium_syntax::Span,
}

impl Lower<'_, '_> {
    pub fn in_package(&self) -> bool {
        !self.packages.is_empty()
    }

    /// A branch on `c` begins (inside a package, its condition guards what is extracted).
    pub fn entering_branch(&mut self, c: Term) {
        if let Some(frame) = self.packages.last_mut() {
            frame.conditions.push(c);
        }
    }

    /// An exhale begins (inside a package, its reads see what it extracts).
    pub fn entering_exhale(&mut self) {
        if let Some(frame) = self.packages.last_mut() {
            frame.exhales.push(frame.extracted.len());
        }
    }

    pub fn leaving_exhale(&mut self) {
        if let Some(frame) = self.packages.last_mut() {
            frame.exhales.pop();
        }
    }

    /// How many extractions the innermost package made so far.
    pub fn extracted_so_far(&self) -> usize {
        self.packages.last().map_or(0, |f| f.extracted.len())
    }

    /// Adds to `st` what the innermost package extracted since `mark`.
    pub fn add_extracted(&mut self, st: &mut State, mark: usize) {
        let added = self.with_extracted_from(st, mark);
        st.memory.mask = added.memory.mask;
    }

    /// The state an exhale reads, `before` it, with what it extracted so far: a location
    /// the witnesses get from the state around is readable for the rest of the exhale.
    pub fn with_extracted(&mut self, before: &State) -> State {
        let Some(frame) = self.packages.last() else {
            return before.clone();
        };
        let from = frame
            .exhales
            .last()
            .copied()
            .unwrap_or(frame.extracted.len());
        self.with_extracted_from(before, from)
    }

    /// `before` with what the innermost package extracted since `from` added.
    fn with_extracted_from(&mut self, before: &State, from: usize) -> State {
        let mut view = before.clone();
        let Some(frame) = self.packages.last() else {
            return view;
        };
        for (map, index, taken) in frame.extracted[from.min(frame.extracted.len())..]
            .iter()
            .cloned()
        {
            let Some(mask) = view.memory.mask.get(&map).cloned() else {
                continue;
            };
            let now = Term::add(vec![Term::select(mask.clone(), index.clone()), taken]);
            view.memory.mask.insert(map, Term::store(mask, index, now));
        }
        view
    }

    pub fn leaving_branch(&mut self) {
        if let Some(frame) = self.packages.last_mut() {
            frame.conditions.pop();
        }
    }

    /// `package wand proof` at `s`.
    pub fn package(
        &mut self,
        st: &mut State,
        s: &Stmt,
        wand: &Expr,
        proof: Option<&Block>,
    ) -> R<()> {
        let ctx = ErrorContext::at("package.failed", s.span, "Packaging wand might fail.");
        let wellformed = self.check_wand_wellformed(st, wand)?;
        self.wands_checked
            .insert(crate::wands::shape_of(self.t.sem, wand).0);
        let nothing = Memory::empty(&mut self.vc, self.t);
        let outer = self.side_path_after(&st.reach, &wellformed, |l, reach| {
            let mut witness = State {
                memory: Memory {
                    mask: nothing.mask,
                    ..st.memory.clone()
                },
                reach,
                ..st.clone()
            };
            let instance = l.vc.fresh("wand", l.t.frames.sort.clone());
            l.vc.begin_region();
            let r =
                l.package_in_region(st.memory.clone(), &mut witness, wand, proof, &ctx, instance);
            l.vc.end_region();
            r
        })?;
        let (outer, frame) = outer;
        let changed: Vec<String> = outer
            .mask
            .iter()
            .filter(|(m, mask)| st.memory.mask.get(*m) != Some(*mask))
            .map(|(m, _)| m.clone())
            .collect();
        st.memory.mask = outer.mask;
        for map in changed {
            self.havoc_unheld(&mut st.memory, &map);
        }
        let reach = st.reach.clone();
        let (map, index) = self.wand_location(st, &reach, wand, &ctx)?;
        let before = Term::select(st.memory.mask[&map].clone(), index.clone());
        self.inhale(st, wand, &ctx)?;
        // The instance's frame, unless one was held already (instances are not told apart).
        let frame = Term::ite(
            Term::gt(before, Term::real(0, 1)),
            Term::select(st.memory.heap[&map].clone(), index.clone()),
            frame,
        );
        let heap = Term::store(st.memory.heap[&map].clone(), index, frame);
        let heap = self.vc.define(&format!("H_{map}"), heap);
        st.memory.heap.insert(map, heap);
        Ok(())
    }

    fn package_in_region(
        &mut self,
        outer: Memory,
        witness: &mut State,
        wand: &Expr,
        proof: Option<&Block>,
        ctx: &ErrorContext,
        instance: Term,
    ) -> R<(Memory, Term)> {
        let ExprKind::Binary(BinaryOp::Wand, lhs, rhs) = &wand.kind else {
            return unsupported(wand.span, "this magic wand");
        };
        let nothing = witness.memory.mask.clone();
        // Checked as the witnesses are made (an ill-defined left-hand side was reported
        // as not well-formed, and this path comes after that check).
        self.with_modes(
            |m| m.fresh_on_inhale = true,
            |l| l.inhale(witness, lhs, ctx),
        )?;
        witness
            .labels
            .insert(LHS.to_string(), witness.memory.clone());
        let nonempty = match self.vc.another_witness(&witness.reach) {
            Some(copy) => copy,
            None => self.vc.fresh("nonempty", Sort::Bool),
        };
        self.vc
            .fact_outside(Term::implies(witness.reach.clone(), nonempty.clone()));
        let values = self.wand_shape(wand).map(|s| s.values).unwrap_or_default();
        self.packages.push(PackageFrame {
            outer,
            nonempty,
            conditions: Vec::new(),
            extracted: Vec::new(),
            exhales: Vec::new(),
            instance: instance.clone(),
            values,
            nothing,
            quantified: Default::default(),
            span: wand.span,
        });
        let r = (|| {
            if let Some(b) = proof {
                self.stmts(witness, &b.stmts)?;
            }
            self.take_all(witness, &[(rhs, ctx.clone())]).map(|_| ())
        })();
        let frame = self.packages.pop();
        r?;
        let Some(frame) = frame else {
            return unsupported(rhs.span, "this package");
        };
        // The instance's frame `w`: for every witness, the right-hand side's frame is
        // `wandrhs(w, its left-hand side's frame)` (what is held of the left-hand side
        // and the footprint's values fix it).
        let w = instance;
        let lhs_state = State {
            memory: witness.labels[LHS].clone(),
            ..witness.clone()
        };
        let Some(shape) = self.wand_shape(wand) else {
            return Ok((frame.outer, w));
        };
        if let Some((a, b)) = self.frames_of(&lhs_state, lhs, witness, rhs) {
            let promised = Term::app(&shape.rhs, vec![w.clone(), a]);
            self.vc
                .fact_outside(Term::implies(witness.reach.clone(), Term::eq(b, promised)));
        }
        Ok((frame.outer, w))
    }

    /// Inside a package: whether some witness exists, the conditions of the branches
    /// entered, and the mask of `map` the state around has left.
    fn extraction_context(&self, map: &str) -> Option<(Term, Term, Term)> {
        let frame = self.packages.last()?;
        Some((
            frame.nonempty.clone(),
            Term::and(frame.conditions.clone()),
            frame.outer.mask[map].clone(),
        ))
    }

    /// Inside a package, before `amount` of `map` at `index` is taken from the witnesses'
    /// state `st`: extracts what they miss from the state around (see the module
    /// documentation).
    pub fn extract(
        &mut self,
        st: &mut State,
        map: &str,
        index: &Term,
        amount: &Term,
        field: bool,
    ) -> R<()> {
        let Some((nonempty, pc, outer_mask)) = self.extraction_context(map) else {
            return Ok(());
        };
        let mask = st.memory.mask[map].clone();
        let have = Term::select(mask.clone(), index.clone());
        let need = missing(&have, amount);
        let outer_has = Term::select(outer_mask.clone(), index.clone());
        let uniform = !self.vc.witness_dependent(&[&need, index, &pc]);
        let (taken, outer_after) = if uniform {
            let taken = self.vc.define(
                "taken",
                least_taken(Term::and([nonempty, pc]), need, &outer_has),
            );
            let after = Term::store(
                outer_mask,
                index.clone(),
                Term::sub(outer_has, taken.clone()),
            );
            (taken, self.vc.define(&format!("M_{map}"), after))
        } else {
            self.footprint_map(st, map, index, &need, &outer_mask, &pc)
        };
        let shown = if self.t.combinable_wands && field {
            self.visible_to_witnesses(st, map, index, &taken)?
        } else {
            taken.clone()
        };
        let now = Term::add(vec![have.clone(), shown]);
        let (recorded, compatible) = self.given_facts(st, map, index, &taken, &have, &now, field);
        if let Some((recorded, _)) = recorded {
            self.vc.fact_outside(recorded);
        }
        if let Some(frame) = self.packages.last_mut() {
            frame.outer.mask.insert(map.to_string(), outer_after);
            frame
                .extracted
                .push((map.to_string(), index.clone(), taken.clone()));
        }
        let updated = self
            .vc
            .define(&format!("M_{map}"), Term::store(mask, index.clone(), now));
        st.memory.mask.insert(map.to_string(), updated);
        st.reach = self.vc.assume(&st.reach, compatible);
        Ok(())
    }

    /// What giving `taken` of `map` at `at` (the witnesses held `have`, now `now`) says: the
    /// instance's record of the footprint's value there (with its trigger), and which
    /// witnesses stay — those agreeing with the value given and, for a field, holding at
    /// most a whole permission (the others are dropped: the wand need not hold for them).
    #[allow(clippy::too_many_arguments)]
    fn given_facts(
        &self,
        st: &State,
        map: &str,
        at: &Term,
        taken: &Term,
        have: &Term,
        now: &Term,
        field: bool,
    ) -> (Option<(Term, Term)>, Term) {
        let zero = Term::real(0, 1);
        let given = Term::gt(taken.clone(), zero.clone());
        let frame = self.packages.last();
        let outer_value = frame.map(|f| Term::select(f.outer.heap[map].clone(), at.clone()));
        let recorded = frame.and_then(|f| {
            let value = f.values.get(map)?;
            let recorded = Term::app(value, vec![f.instance.clone(), at.clone()]);
            let fact = Term::implies(
                given.clone(),
                Term::eq(recorded.clone(), outer_value.clone()?),
            );
            Some((fact, recorded))
        });
        let mine = Term::select(st.memory.heap[map].clone(), at.clone());
        let mut compatible = match outer_value {
            Some(v) => Term::implies(
                Term::and([given, Term::gt(have.clone(), zero)]),
                Term::eq(mine, v),
            ),
            None => Term::tt(),
        };
        if field {
            compatible = Term::and([compatible, Term::le(now.clone(), Term::real(1, 1))]);
        }
        (recorded, compatible)
    }

    /// Combinable wands (seed 004): of `taken` at `index` (a field), the part the witnesses
    /// see. Where the left-hand side holds less than a whole permission, the footprint is cut
    /// down to what fits beside it, so a witness is dropped only where nothing of it fits
    /// (the left-hand side holds all there, or the values differ).
    fn visible_to_witnesses(
        &mut self,
        st: &State,
        map: &str,
        index: &Term,
        taken: &Term,
    ) -> R<Term> {
        let Some(frame) = self.packages.last() else {
            return Ok(taken.clone());
        };
        if frame.quantified.contains(map) {
            return unsupported(
                frame.span,
                "a field taken both through a quantifier and location by location in one package of combinable wands",
            );
        }
        let zero = Term::real(0, 1);
        let before = Term::add(
            frame
                .extracted
                .iter()
                .filter(|(m, _, _)| m == map)
                .map(|(_, at, amount)| {
                    Term::ite(
                        Term::eq(at.clone(), index.clone()),
                        amount.clone(),
                        zero.clone(),
                    )
                })
                .chain([zero.clone()])
                .collect(),
        );
        let lhs_holds = match st.labels.get(LHS).and_then(|m| m.mask.get(map)) {
            Some(mask) => Term::select(mask.clone(), index.clone()),
            None => zero.clone(),
        };
        let room = Term::sub(Term::real(1, 1), lhs_holds);
        let capped = |p: Term| Term::ite(Term::le(p.clone(), room.clone()), p, room.clone());
        let after = capped(Term::add(vec![before.clone(), taken.clone()]));
        let visible = Term::sub(after, capped(before));
        Ok(self.vc.define(
            "visible",
            Term::ite(Term::gt(room.clone(), zero), visible, taken.clone()),
        ))
    }

    /// `extract` at every location `r` of a quantified permission (where `inside`, `amount`
    /// of it): only where the witnesses hold nothing of `map` yet (what they hold through a
    /// quantifier is known on their path only, so the code after the package could not tell
    /// how much was taken) and the missing amounts name no witness value; else nothing is
    /// extracted, and the take reports what is missing.
    pub fn extract_pointwise(
        &mut self,
        st: &mut State,
        map: &str,
        r: &Term,
        inside: Term,
        amount: Term,
        field: bool,
    ) -> R<()> {
        let Some((nonempty, pc, outer_mask)) = self.extraction_context(map) else {
            return Ok(());
        };
        let mask = st.memory.mask[map].clone();
        let holds_nothing = self
            .packages
            .last()
            .is_some_and(|f| f.nothing.get(map) == Some(&mask));
        if !holds_nothing {
            return Ok(());
        }
        let have = Term::select(mask.clone(), r.clone());
        let outer_has = Term::select(outer_mask.clone(), r.clone());
        let need = missing(&have, &amount);
        if self.vc.witness_dependent(&[&need, &inside, &pc]) {
            return Ok(());
        }
        let taken = least_taken(Term::and([nonempty, pc, inside]), need, &outer_has);
        let TermKind::Var(symbol) = r.kind() else {
            unreachable!("the location is a variable");
        };
        let var = vec![(symbol.clone(), r.sort().clone())];
        let sort = outer_mask.sort().clone();
        let outer_after = self.vc.fresh(&format!("M_{map}"), sort.clone());
        let mine = self.vc.fresh(&format!("M_{map}"), sort);
        let at = |m: &Term| Term::select(m.clone(), r.clone());
        self.vc.fact(Term::forall(
            var.clone(),
            Term::and([
                Term::eq(at(&outer_after), Term::sub(outer_has, taken.clone())),
                Term::eq(at(&mine), Term::add(vec![have.clone(), taken.clone()])),
            ]),
            vec![vec![at(&outer_after)], vec![at(&mine)]],
        ));
        let (recorded, compatible) = self.given_facts(st, map, r, &taken, &have, &at(&mine), field);
        if let Some((recorded, trigger)) = recorded {
            self.vc
                .fact_outside(Term::forall(var.clone(), recorded, vec![vec![trigger]]));
        }
        if let Some(frame) = self.packages.last_mut() {
            frame.outer.mask.insert(map.to_string(), outer_after);
            frame.quantified.insert(map.to_string());
        }
        st.memory.mask.insert(map.to_string(), mine.clone());
        let all = Term::forall(var, compatible, vec![vec![at(&mine)]]);
        st.reach = self.vc.assume(&st.reach, all);
        Ok(())
    }

    /// A footprint where what is missing may differ between witnesses: a map of amounts
    /// between nothing and what the state around holds, at least what this witness misses
    /// where the state around has that much (so some such map exists). Returns the amount at
    /// `index` and the state around's map after it.
    fn footprint_map(
        &mut self,
        st: &State,
        map: &str,
        index: &Term,
        need: &Term,
        outer_mask: &Term,
        pc: &Term,
    ) -> (Term, Term) {
        let sort = outer_mask.sort().clone();
        let index_sort = sort
            .array_parts()
            .map(|(i, _)| i.clone())
            .unwrap_or_else(|| self.t.reference.clone());
        let footprint = self.vc.fresh("footprint", sort.clone());
        let after = self.vc.fresh(&format!("M_{map}"), sort);
        let r = Symbol::user("r");
        let at = |m: &Term| Term::select(m.clone(), Term::var(r.clone(), index_sort.clone()));
        let zero = Term::real(0, 1);
        self.vc.fact(Term::forall(
            vec![(r.clone(), index_sort.clone())],
            Term::and([
                Term::ge(at(&footprint), zero),
                Term::le(at(&footprint), at(outer_mask)),
                Term::eq(at(&after), Term::sub(at(outer_mask), at(&footprint))),
            ]),
            vec![vec![at(&footprint)], vec![at(&after)]],
        ));
        let taken = Term::select(footprint, index.clone());
        let enough = Term::ge(
            Term::select(outer_mask.clone(), index.clone()),
            need.clone(),
        );
        self.vc.fact_outside(Term::implies(
            Term::and([st.reach.clone(), pc.clone(), enough]),
            Term::ge(taken.clone(), need.clone()),
        ));
        (taken, after)
    }
}

/// What is missing of `amount` where `have` is held.
/// Where `guard` holds, the least of `need` and what the state around has; else nothing.
fn least_taken(guard: Term, need: Term, outer_has: &Term) -> Term {
    let least = Term::ite(
        Term::le(need.clone(), outer_has.clone()),
        need,
        outer_has.clone(),
    );
    Term::ite(guard, least, Term::real(0, 1))
}

fn missing(have: &Term, amount: &Term) -> Term {
    Term::ite(
        Term::ge(have.clone(), amount.clone()),
        Term::real(0, 1),
        Term::sub(amount.clone(), have.clone()),
    )
}
