//! The difference of two integer terms when it is a constant (`(y + 1) - y = 1`), looking
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

/// `a - b` when it is a constant. `definitions` maps named values (fresh constants) to the
/// terms they were defined equal to.
pub fn constant_difference(a: &Term, b: &Term, definitions: &HashMap<Term, Term>) -> Option<i128> {
    if *a.sort() != Sort::Int || *b.sort() != Sort::Int {
        return None;
    }
    let mut diff = linear(a, definitions, 0)?;
    diff.add_scaled(linear(b, definitions, 0)?, -1)?;
    diff.atoms
        .iter()
        .all(|(_, c)| *c == 0)
        .then_some(diff.constant)
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
        assert_eq!(constant_difference(&v, &y, &defs), Some(1));
        assert_eq!(constant_difference(&y, &w, &defs), Some(2));
        assert_eq!(constant_difference(&y, &y, &defs), Some(0));
        let two_y = Term::mul(vec![Term::int(2), y.clone()]);
        assert_eq!(constant_difference(&two_y, &y, &defs), None);
        assert_eq!(constant_difference(&int("z"), &y, &defs), None);
    }
}
