//! Two integer terms as one linear base plus a constant each (`y + 1` and `y + 2`), looking
//! through the definitions of named values. What a join needs to state that a joined value
//! lies between its two sides without a disjunction.

use std::collections::HashMap;

use germanium_smt::{Op, Sort, Term, TermKind};

/// How deep named values are expanded (a definition may name another value).
const MAX_EXPANSION: usize = 4;

/// `Σ coefficient · atom + constant`, atoms in first-seen order.
#[derive(Default)]
struct Linear {
    atoms: Vec<(Term, i128)>,
    constant: i128,
}

impl Linear {
    fn add_atom(&mut self, atom: Term, coefficient: i128) -> Option<()> {
        match self.atoms.iter_mut().find(|(a, _)| *a == atom) {
            Some((_, c)) => *c = c.checked_add(coefficient)?,
            None => self.atoms.push((atom, coefficient)),
        }
        Some(())
    }

    fn add_scaled(&mut self, other: Linear, factor: i128) -> Option<()> {
        for (atom, c) in other.atoms {
            self.add_atom(atom, c.checked_mul(factor)?)?;
        }
        self.constant = self
            .constant
            .checked_add(other.constant.checked_mul(factor)?)?;
        Some(())
    }
}

/// `a` read with `a_defs` and `b` read with `b_defs` as `base + ca` and `base + cb` for one
/// linear `base` (a formal identity, so it holds wherever each side's definitions hold):
/// `(base, ca, cb)`. `base` is `0` when both are constants.
pub fn common_base(
    (a, a_defs): (&Term, &HashMap<Term, Term>),
    (b, b_defs): (&Term, &HashMap<Term, Term>),
) -> Option<(Term, i128, i128)> {
    if *a.sort() != Sort::Int || *b.sort() != Sort::Int {
        return None;
    }
    let la = linear(a, a_defs, 0)?;
    let lb = linear(b, b_defs, 0)?;
    // The same atoms with the same coefficients on both sides (zero ones aside; an atom
    // occurs once in each).
    let nonzero =
        |l: Linear| -> Vec<(Term, i128)> { l.atoms.into_iter().filter(|(_, c)| *c != 0).collect() };
    let (ca, cb) = (la.constant, lb.constant);
    let (atoms, others) = (nonzero(la), nonzero(lb));
    if atoms.len() != others.len() || atoms.iter().any(|atom| !others.contains(atom)) {
        return None;
    }
    let parts: Vec<Term> = atoms
        .into_iter()
        .map(|(atom, c)| match c {
            1 => atom,
            c => Term::mul(vec![Term::int_lit(c.into()), atom]),
        })
        .collect();
    let base = match parts.len() {
        0 => Term::int(0),
        1 => parts.into_iter().next()?,
        _ => Term::add(parts),
    };
    Some((base, ca, cb))
}

fn linear(t: &Term, definitions: &HashMap<Term, Term>, depth: usize) -> Option<Linear> {
    let mut out = Linear::default();
    if let Some(i) = t.as_int() {
        out.constant = i.as_i128()?;
        return Some(out);
    }
    match t.kind() {
        TermKind::Op(Op::Add, args) => {
            for arg in args {
                out.add_scaled(linear(arg, definitions, depth)?, 1)?;
            }
        }
        TermKind::Op(Op::Sub, args) if !args.is_empty() => {
            out.add_scaled(linear(&args[0], definitions, depth)?, 1)?;
            for arg in &args[1..] {
                out.add_scaled(linear(arg, definitions, depth)?, -1)?;
            }
        }
        TermKind::Op(Op::Neg, args) if args.len() == 1 => {
            out.add_scaled(linear(&args[0], definitions, depth)?, -1)?;
        }
        TermKind::Op(Op::Mul, args) => {
            // A product with at most one factor that is not a literal.
            let mut factor: i128 = 1;
            let mut rest = None;
            for arg in args {
                match arg.as_int().and_then(|i| i.as_i128()) {
                    Some(n) => factor = factor.checked_mul(n)?,
                    None if rest.is_none() => rest = Some(arg),
                    None => return None,
                }
            }
            match rest {
                Some(r) => out.add_scaled(linear(r, definitions, depth)?, factor)?,
                None => out.constant = factor,
            }
        }
        _ => match definitions.get(t).filter(|_| depth < MAX_EXPANSION) {
            Some(def) => out.add_scaled(linear(def, definitions, depth + 1)?, 1)?,
            None => out.add_atom(t.clone(), 1)?,
        },
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::{FunDecl, Symbol};

    fn int(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::Int))
    }

    #[test]
    fn differences_through_definitions() {
        let (y, v, w) = (int("y"), int("v"), int("w"));
        let mut defs = HashMap::new();
        defs.insert(v.clone(), Term::add(vec![y.clone(), Term::int(1)]));
        defs.insert(w.clone(), Term::sub(v.clone(), Term::int(3)));
        let difference =
            |a: &Term, b: &Term| common_base((a, &defs), (b, &defs)).map(|(_, ca, cb)| ca - cb);
        assert_eq!(difference(&v, &y), Some(1));
        assert_eq!(difference(&y, &w), Some(2));
        assert_eq!(difference(&y, &y), Some(0));
        let two_y = Term::mul(vec![Term::int(2), y.clone()]);
        assert_eq!(difference(&two_y, &y), None);
        assert_eq!(difference(&int("z"), &y), None);
    }

    #[test]
    fn each_side_is_read_with_its_own_definitions() {
        let (y, v, w) = (int("y"), int("v"), int("w"));
        let mut then_defs = HashMap::new();
        then_defs.insert(v.clone(), Term::add(vec![y.clone(), Term::int(1)]));
        let mut else_defs = HashMap::new();
        else_defs.insert(w.clone(), Term::add(vec![y.clone(), Term::int(2)]));
        let (base, ca, cb) = common_base((&v, &then_defs), (&w, &else_defs)).unwrap();
        assert_eq!((base, ca, cb), (y.clone(), 1, 2));
        // The other side's definitions are not used: `w` means nothing on the `then` side.
        assert!(common_base((&w, &then_defs), (&v, &else_defs)).is_none());
        // Constants on both sides: the base is zero.
        let (base, ca, cb) =
            common_base((&Term::int(3), &then_defs), (&Term::int(7), &else_defs)).unwrap();
        assert_eq!((base, ca, cb), (Term::int(0), 3, 7));
    }
}
