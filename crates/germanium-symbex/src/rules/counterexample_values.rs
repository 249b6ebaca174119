//! Reading Viper values out of a solver model, by type: what to ask in the first round
//! (a plain value, or a collection's size), what to ask in the second once sizes are
//! known (a sequence's elements; a set's elements and a map's keys as fresh constants the
//! solver must make members, pairwise distinct), and how to write the answers as Viper
//! does: `Seq(1, 2)`, `Set(1, 5)`, `Map(1 := true)`, `Cons(1, Nil())`, `red` (a domain value
//! equal to a named constant), `o1` (an object), `1/2`.

use std::collections::HashMap;

use germanium_semantics::types::Type;
use germanium_smt::{FunDecl, RealLit, SExpr, Sort, Symbol, Term, Value};
use germanium_theories::{Theories, TheoryOp};

use crate::decider::SecondAsk;
use crate::env::Env;

/// At most this many elements of a collection are shown.
pub(crate) const MAX_ELEMENTS: u64 = 10;

/// How a value of a type is read.
#[derive(Clone, Debug)]
enum Shape {
    Plain,
    Seq(Type),
    Set(Type),
    /// Only its size is read.
    Multiset,
    Map(Type, Type),
}

fn is_plain(ty: &Type) -> bool {
    matches!(
        ty,
        Type::Int | Type::Bool | Type::Perm | Type::Ref | Type::Domain(..) | Type::Adt(..)
    )
}

fn shape(ty: &Type) -> Option<Shape> {
    match ty {
        t if is_plain(t) => Some(Shape::Plain),
        Type::Seq(e) if is_plain(e) => Some(Shape::Seq((**e).clone())),
        Type::Set(e) if is_plain(e) => Some(Shape::Set((**e).clone())),
        Type::Multiset(e) if is_plain(e) => Some(Shape::Multiset),
        Type::Map(k, v) if is_plain(k) && is_plain(v) => {
            Some(Shape::Map((**k).clone(), (**v).clone()))
        }
        _ => None,
    }
}

/// One value to show: its type, its term, and where its first-round answer is.
#[derive(Clone, Debug)]
struct Slot {
    ty: Type,
    shape: Shape,
    term: Term,
    first: usize,
}

/// The terms a model is asked for, and how to read the answers.
pub(crate) struct Plan<'e, 'a> {
    env: &'e Env<'a>,
    wanted: Vec<Term>,
    slots: Vec<Slot>,
    /// Named domain constants: the domain, the name, and where their values are.
    constants: Vec<(String, String, usize)>,
}

/// A collection's second-round layout: where its elements (and a map's values) are.
struct Elements {
    count: u64,
    /// Index of the first second-round value, and how many elements were asked.
    start: usize,
    asked: usize,
}

impl<'e, 'a> Plan<'e, 'a> {
    /// A plan whose first value asked is `null`.
    pub fn new(env: &'e Env<'a>) -> Plan<'e, 'a> {
        Plan {
            env,
            wanted: vec![env.null.clone()],
            slots: Vec::new(),
            constants: Vec::new(),
        }
    }

    fn theories(&self) -> Option<&'e Theories> {
        self.env.theories.as_ref()
    }

    /// Asks for one term of the first round; returns where its answer is.
    pub fn ask(&mut self, t: Term) -> usize {
        self.wanted.push(t);
        self.wanted.len() - 1
    }

    /// Adds a value of type `ty` to read (`None` when its type is not shown).
    pub fn value(&mut self, ty: &Type, term: Term) -> Option<usize> {
        let shape = shape(ty)?;
        let first_term = match &shape {
            Shape::Plain => term.clone(),
            Shape::Seq(e) => self.apply(TheoryOp::SeqLength(e.clone()), vec![term.clone()])?,
            Shape::Set(e) => self.apply(TheoryOp::SetCardinality(e.clone()), vec![term.clone()])?,
            Shape::Multiset => {
                let Type::Multiset(e) = ty else { return None };
                self.apply(
                    TheoryOp::MultisetCardinality((**e).clone()),
                    vec![term.clone()],
                )?
            }
            Shape::Map(k, v) => self.apply(
                TheoryOp::MapCardinality(k.clone(), v.clone()),
                vec![term.clone()],
            )?,
        };
        for t in element_types(&shape, ty) {
            self.name_constants_of(&t);
        }
        let first = self.ask(first_term);
        self.slots.push(Slot {
            ty: ty.clone(),
            shape,
            term,
            first,
        });
        Some(self.slots.len() - 1)
    }

    fn apply(&self, op: TheoryOp, args: Vec<Term>) -> Option<Term> {
        self.theories()?.apply(&op, args).ok()
    }

    /// Asks for the values of a (non-generic) domain's constants, to name its values.
    fn name_constants_of(&mut self, ty: &Type) {
        let Type::Domain(domain, args) = ty else {
            return;
        };
        if !args.is_empty() || self.constants.iter().any(|(d, _, _)| d == domain) {
            return;
        }
        let sem = self.env.sem;
        let Some(info) = sem.domains.get(domain) else {
            return;
        };
        for name in &info.functions {
            let Some(f) = sem.domain_functions.get(name) else {
                continue;
            };
            if !f.params.is_empty() || f.result != *ty || f.interpretation.is_some() {
                continue;
            }
            let op = TheoryOp::DomainFunction {
                domain: domain.clone(),
                function: name.clone(),
                type_args: Vec::new(),
            };
            if let Some(t) = self.apply(op, Vec::new()) {
                let at = self.ask(t);
                self.constants.push((domain.clone(), name.clone(), at));
            }
        }
    }

    /// The first round's terms.
    pub fn first_round(&self) -> &[Term] {
        &self.wanted
    }

    /// Per collection slot, its count and the second-round values it asked for, in slot
    /// order (the same for asking and reading).
    fn layout(&self, first: &[Value]) -> HashMap<usize, Elements> {
        let mut out = HashMap::new();
        let mut start = 0;
        for (i, slot) in self.slots.iter().enumerate() {
            let per = match slot.shape {
                Shape::Plain => continue,
                Shape::Seq(_) | Shape::Set(_) => 1,
                Shape::Map(..) => 2,
                Shape::Multiset => 0,
            };
            let Some(count) = first.get(slot.first).and_then(small_count) else {
                continue;
            };
            let asked = count.min(MAX_ELEMENTS) as usize * per;
            out.insert(
                i,
                Elements {
                    count,
                    start,
                    asked,
                },
            );
            start += asked;
        }
        out
    }

    /// The second round, from the first round's values.
    pub fn second_round(&self, first: &[Value]) -> SecondAsk {
        let mut ask = SecondAsk::default();
        let layout = self.layout(first);
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(elements) = layout.get(&i) else {
                continue;
            };
            let shown = elements.count.min(MAX_ELEMENTS);
            let all = elements.count <= MAX_ELEMENTS;
            // The size the elements were chosen for stays the size.
            let size = Term::eq(
                self.wanted[slot.first].clone(),
                Term::int(elements.count as i64),
            );
            match &slot.shape {
                Shape::Seq(e) => {
                    ask.facts.push(size);
                    for j in 0..shown {
                        let index = Term::int(j as i64);
                        let op = TheoryOp::SeqIndex(e.clone());
                        ask.more
                            .extend(self.apply(op, vec![slot.term.clone(), index]));
                    }
                }
                Shape::Set(e) => {
                    let contains = |x: Term| {
                        let op = TheoryOp::SetContains(e.clone());
                        self.apply(op, vec![x, slot.term.clone()])
                    };
                    let Some(members) = self.members(&mut ask, e, (i, shown, all), size, contains)
                    else {
                        continue;
                    };
                    ask.more.extend(members);
                }
                Shape::Map(k, v) => {
                    let has_key = |x: Term| {
                        let op = TheoryOp::MapContainsKey(k.clone(), v.clone());
                        self.apply(op, vec![x, slot.term.clone()])
                    };
                    let Some(keys) = self.members(&mut ask, k, (i, shown, all), size, has_key)
                    else {
                        continue;
                    };
                    for key in keys {
                        let op = TheoryOp::MapLookup(k.clone(), v.clone());
                        ask.more.push(key.clone());
                        ask.more
                            .extend(self.apply(op, vec![slot.term.clone(), key]));
                    }
                }
                Shape::Plain | Shape::Multiset => {}
            }
        }
        ask
    }

    /// Asks for `shown` fresh constants of type `ty` (for slot `slot`), distinct, each a
    /// member by `member`, with `size` kept; when they are `all` the members, nothing else
    /// is one. `None` when the type has no sort.
    fn members(
        &self,
        ask: &mut SecondAsk,
        ty: &Type,
        (slot, shown, all): (usize, u64, bool),
        size: Term,
        member: impl Fn(Term) -> Option<Term>,
    ) -> Option<Vec<Term>> {
        let sort = self.theories()?.sort(ty).ok()?;
        let members: Vec<Term> = (0..shown)
            .map(|j| {
                let decl =
                    FunDecl::constant(Symbol::user(&format!("sx.ce.{slot}.{j}")), sort.clone());
                ask.declare.push(decl.clone());
                Term::constant(&decl)
            })
            .collect();
        ask.facts.push(size);
        ask.facts
            .extend(members.iter().filter_map(|m| member(m.clone())));
        ask.facts.extend(distinct(&members));
        if all {
            // A member the path knows of is one of them.
            ask.facts.extend(only(&members, sort, slot, member));
        }
        Some(members)
    }

    /// Reads the answers: `values` holds the first round's and, if the second round was
    /// answered, the second's after them.
    pub fn reader<'p>(&'p self, values: &'p [Value]) -> Reader<'p, 'e, 'a> {
        let first = &values[..self.wanted.len().min(values.len())];
        let second = values.get(self.wanted.len()..).unwrap_or_default();
        Reader {
            plan: self,
            values,
            second,
            layout: self.layout(first),
            objects: Vec::new(),
        }
    }
}

fn element_types(shape: &Shape, ty: &Type) -> Vec<Type> {
    match (shape, ty) {
        (Shape::Plain, t) => vec![t.clone()],
        (Shape::Seq(e) | Shape::Set(e), _) => vec![e.clone()],
        (Shape::Map(k, v), _) => vec![k.clone(), v.clone()],
        (Shape::Multiset, _) => Vec::new(),
    }
}

/// `forall x :: member(x) ==> x == m1 || ...`, triggered on `member(x)`: the members asked
/// for are all there are, so a member the path knows of must be among them.
fn only(
    members: &[Term],
    sort: Sort,
    slot: usize,
    member: impl Fn(Term) -> Option<Term>,
) -> Option<Term> {
    let x = Symbol::user(&format!("sx.ce.x{slot}"));
    let bound = Term::var(x.clone(), sort.clone());
    let is_member = member(bound.clone())?;
    let among = Term::or(members.iter().map(|m| Term::eq(bound.clone(), m.clone())));
    Some(Term::forall(
        vec![(x, sort)],
        Term::implies(is_member.clone(), among),
        vec![vec![is_member]],
    ))
}

fn distinct(terms: &[Term]) -> Option<Term> {
    (terms.len() > 1).then(|| Term::distinct(terms.to_vec()))
}

/// A collection's size, if it is a number small enough to work with.
fn small_count(value: &Value) -> Option<u64> {
    match value {
        Value::Int(i) => i.as_i128().and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

/// Turns answers into Viper's text, naming objects in order of first appearance.
pub(crate) struct Reader<'p, 'e, 'a> {
    plan: &'p Plan<'e, 'a>,
    values: &'p [Value],
    second: &'p [Value],
    layout: HashMap<usize, Elements>,
    objects: Vec<Value>,
}

impl Reader<'_, '_, '_> {
    /// The first-round answer at `at`.
    pub fn answer(&self, at: usize) -> Option<&Value> {
        self.values.get(at)
    }

    /// Slot `slot`'s value as Viper writes it.
    pub fn show(&mut self, slot: usize) -> String {
        let s = self.plan.slots[slot].clone();
        let Some(first) = self.values.get(s.first).cloned() else {
            return "?".into();
        };
        if let Shape::Plain = s.shape {
            return self.plain(&s.ty, &first);
        }
        // A size that was not read, or elements asked and not answered: the kind alone.
        let unknown = || match &s.shape {
            Shape::Seq(_) => "Seq(...)",
            Shape::Set(_) => "Set(...)",
            Shape::Multiset => "Multiset(...)",
            Shape::Map(..) | Shape::Plain => "Map(...)",
        };
        let Some(&Elements {
            count,
            start,
            asked,
        }) = self.layout.get(&slot)
        else {
            return unknown().into();
        };
        if self.second.len() < start + asked {
            return unknown().into();
        }
        let more = if count > MAX_ELEMENTS { ", ..." } else { "" };
        match &s.shape {
            Shape::Plain => unreachable!("returned above"),
            Shape::Seq(e) => format!("Seq({}{more})", self.items(e, start, asked).join(", ")),
            Shape::Set(e) => {
                let mut items = self.items(e, start, asked);
                items.sort_by(|a, b| natural(a, b));
                format!("Set({}{more})", items.join(", "))
            }
            Shape::Multiset if count == 0 => "Multiset()".into(),
            Shape::Multiset => format!("Multiset(...) of size {count}"),
            Shape::Map(k, v) => {
                let mut pairs = Vec::new();
                for j in 0..asked / 2 {
                    let key = self.second[start + 2 * j].clone();
                    let value = self.second[start + 2 * j + 1].clone();
                    let (key, value) = (self.plain(k, &key), self.plain(v, &value));
                    pairs.push(format!("{key} := {value}"));
                }
                pairs.sort_by(|a, b| natural(a, b));
                format!("Map({}{more})", pairs.join(", "))
            }
        }
    }

    fn items(&mut self, elem: &Type, start: usize, asked: usize) -> Vec<String> {
        (start..start + asked)
            .filter_map(|i| self.second.get(i).cloned())
            .map(|v| self.plain(elem, &v))
            .collect()
    }

    /// An object's name for a reference value.
    pub fn object(&mut self, value: &Value) -> String {
        if Some(value) == self.values.first() {
            return "null".into();
        }
        let at = match self.objects.iter().position(|v| v == value) {
            Some(i) => i,
            None => {
                self.objects.push(value.clone());
                self.objects.len() - 1
            }
        };
        format!("o{}", at + 1)
    }

    /// A value of a plain type as Viper writes it.
    pub fn plain(&mut self, ty: &Type, value: &Value) -> String {
        match (ty, value) {
            (Type::Ref, v) => self.object(v),
            (Type::Domain(domain, _), v) => {
                let named = self
                    .plan
                    .constants
                    .iter()
                    .find(|(d, _, at)| d == domain && self.values.get(*at) == Some(v));
                match (named, v) {
                    (Some((_, name, _)), _) => name.clone(),
                    (None, Value::Element(e)) => element_name(domain, e.as_str()),
                    (None, v) => self.basic(v),
                }
            }
            (Type::Adt(..), Value::Element(e)) => format!("{}()", constructor_name(e.as_str())),
            (Type::Adt(..), Value::Other(x)) => adt_text(x),
            (_, v) => self.basic(v),
        }
    }

    fn basic(&self, value: &Value) -> String {
        match value {
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Real(r) => fraction(r),
            Value::Element(e) => e.as_str().to_string(),
            Value::Other(x) => x.to_string(),
        }
    }
}

/// An element of an uninterpreted sort (`Color!val!1`) as `Color#1`.
fn element_name(domain: &str, text: &str) -> String {
    match text.rsplit_once("!val!") {
        Some((_, n)) => format!("{domain}#{n}"),
        None => text.to_string(),
    }
}

/// A constructor's Viper name from its solver name (`List.Cons` → `Cons`).
fn constructor_name(text: &str) -> &str {
    text.rsplit('.').next().unwrap_or(text)
}

/// An ADT value as the solver prints it, `(List.Cons 1 List.Nil)`, as `Cons(1, Nil())`.
fn adt_text(x: &SExpr) -> String {
    match x {
        SExpr::List(items) => match items.split_first() {
            Some((SExpr::Symbol(c), args)) if c != "-" && c != "/" => {
                let args: Vec<String> = args.iter().map(adt_text).collect();
                format!("{}({})", constructor_name(c), args.join(", "))
            }
            _ => numeric_text(x).unwrap_or_else(|| x.to_string()),
        },
        SExpr::Symbol(s) if s.contains('.') && !s.contains("!val!") => {
            format!("{}()", constructor_name(s))
        }
        other => numeric_text(other).unwrap_or_else(|| other.to_string()),
    }
}

/// A number inside an ADT value (`(- 3)`, `(/ 1.0 2.0)`) as Viper writes it.
fn numeric_text(x: &SExpr) -> Option<String> {
    match Value::from_sexpr(x) {
        Value::Int(i) => Some(i.to_string()),
        Value::Real(r) => Some(fraction(&r)),
        _ => None,
    }
}

/// Orders shown values numerically where both are numbers, else as text.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let lead = |s: &str| {
        s.split([' ', ','])
            .next()
            .and_then(|n| n.parse::<i128>().ok())
    };
    match (lead(a), lead(b)) {
        (Some(x), Some(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        _ => a.cmp(b),
    }
}

/// A rational as Viper writes a permission: `1/2`, `0`, `-3/4`.
pub(crate) fn fraction(r: &RealLit) -> String {
    if r.is_integer() {
        r.numerator().to_string()
    } else {
        format!("{}/{}", r.numerator(), r.denominator())
    }
}
