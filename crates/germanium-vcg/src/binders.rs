//! Variables bound by a quantifier, `forperm`, `quasihavocall` or a quantified permission:
//! fresh constants stand for them while the body is lowered (so its definedness is checked
//! at arbitrary values, and a failed check names values a model can show), and the lowered
//! terms are then closed over bound variables, or put at other values.

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::{substitute, Sort, Symbol, Term};
use germanium_syntax::ast::NodeId;
use germanium_syntax::Span;

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

/// The variables of one binder, as constants and as bound variables.
#[derive(Clone, Debug)]
pub struct Bound {
    bindings: Vec<(VarId, Term)>,
    pub constants: Vec<Term>,
    pub vars: Vec<(Symbol, Sort)>,
    to_vars: HashMap<Term, Term>,
}

impl Bound {
    /// `st` with the variables bound to their constants.
    pub fn state(&self, st: &State) -> State {
        let mut inner = st.clone();
        for (var, constant) in &self.bindings {
            inner.store.insert(*var, constant.clone());
        }
        inner
    }

    /// The bound variables as terms.
    pub fn variables(&self) -> Vec<Term> {
        self.vars
            .iter()
            .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
            .collect()
    }

    /// A term lowered at the constants, over the bound variables instead.
    pub fn close(&self, t: &Term) -> Term {
        substitute(t, &self.to_vars)
    }

    /// A closed term at `values` of the variables.
    pub fn at(&self, closed: &Term, values: &[Term]) -> Term {
        let map = self
            .variables()
            .into_iter()
            .zip(values.iter().cloned())
            .collect();
        substitute(closed, &map)
    }

    /// Fresh constants for the variables (a second point, as injectivity asks).
    pub fn other_constants(&self, l: &mut Lower<'_, '_>) -> Vec<Term> {
        self.vars
            .iter()
            .map(|(s, sort)| l.vc.fresh(&format!("{s}%2"), sort.clone()))
            .collect()
    }
}

impl Lower<'_, '_> {
    /// The `count` variables `node` binds, each a fresh constant, named apart by `tag`.
    pub fn bind(&mut self, node: NodeId, count: usize, span: Span, tag: &str) -> R<Bound> {
        let mut bound = Bound {
            bindings: Vec::new(),
            constants: Vec::new(),
            vars: Vec::new(),
            to_vars: HashMap::new(),
        };
        for i in 0..count {
            let Some(var) = self.t.sem.binders.get(&(node, i)).copied() else {
                return unsupported(span, "this binder");
            };
            let info = self.t.sem.var(var).clone();
            let sort = self.sort(&info.ty, span)?;
            let constant = self.vc.fresh(&info.name, sort.clone());
            let symbol = Symbol::user(&format!("{}%{tag}{}", info.name, node.0));
            bound
                .to_vars
                .insert(constant.clone(), Term::var(symbol.clone(), sort.clone()));
            bound.bindings.push((var, constant.clone()));
            bound.constants.push(constant);
            bound.vars.push((symbol, sort));
        }
        Ok(bound)
    }
}
