//! Terms: immutable, shared trees with a cached hash and sort.
//!
//! A [`Term`] is one `Arc`: cloning is a reference-count increment, and equality first
//! compares pointers, then cached hashes, and only then structure (children again
//! pointer-first), so comparing shared or different terms is cheap. Terms are `Send + Sync`,
//! so one worker's terms can be handed to another.
//!
//! Terms are built through the constructors in [`crate::build`], which simplify on the fly;
//! this module only defines the data.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::literal::{IntLit, RealLit};
use crate::sort::Sort;
use crate::symbol::Symbol;

/// A shared, immutable SMT term.
#[derive(Clone)]
pub struct Term(Arc<Node>);

struct Node {
    kind: TermKind,
    sort: Sort,
    hash: u64,
}

/// What a term is. Children are [`Term`]s.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TermKind {
    Bool(bool),
    Int(IntLit),
    Real(RealLit),
    /// A variable bound by a quantifier, a `let`, or a `define-fun` parameter.
    Var(Symbol),
    /// Application of a declared function; a constant is an application to no arguments.
    App(FunDecl, Vec<Term>),
    /// A built-in operator.
    Op(Op, Vec<Term>),
    /// Application of a built-in given as SMT-LIB text (Viper backend types: `bvadd`,
    /// `(_ extract 7 0)`, `fp.add`, or a constant such as `RNE` when there are no arguments).
    Builtin(Arc<str>, Vec<Term>),
    Quantifier(Arc<Quantifier>),
    /// `(let ((x t) ...) body)`; the bindings are parallel, as in SMT-LIB.
    Let(Vec<(Symbol, Term)>, Term),
}

/// Built-in operators with a fixed SMT-LIB name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    Not,
    And,
    Or,
    Implies,
    Xor,
    Eq,
    Distinct,
    Ite,
    Add,
    Sub,
    Mul,
    Neg,
    /// Integer division (`div`, SMT-LIB's Euclidean division).
    IntDiv,
    /// Integer remainder (`mod`, always non-negative for a non-zero divisor).
    Mod,
    /// Real division (`/`).
    RealDiv,
    Abs,
    Lt,
    Le,
    Gt,
    Ge,
    ToReal,
    ToInt,
    IsInt,
    Select,
    Store,
}

impl Op {
    /// The SMT-LIB function symbol.
    pub fn name(self) -> &'static str {
        match self {
            Op::Not => "not",
            Op::And => "and",
            Op::Or => "or",
            Op::Implies => "=>",
            Op::Xor => "xor",
            Op::Eq => "=",
            Op::Distinct => "distinct",
            Op::Ite => "ite",
            Op::Add => "+",
            Op::Sub | Op::Neg => "-",
            Op::Mul => "*",
            Op::IntDiv => "div",
            Op::Mod => "mod",
            Op::RealDiv => "/",
            Op::Abs => "abs",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::ToReal => "to_real",
            Op::ToInt => "to_int",
            Op::IsInt => "is_int",
            Op::Select => "select",
            Op::Store => "store",
        }
    }
}

/// A declared function: name and signature. Shared; compare and clone cheaply.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct FunDecl(Arc<FunSignature>);

#[derive(PartialEq, Eq, Hash, Debug)]
struct FunSignature {
    name: Symbol,
    args: Vec<Sort>,
    result: Sort,
}

impl FunDecl {
    pub fn new(name: Symbol, args: Vec<Sort>, result: Sort) -> FunDecl {
        FunDecl(Arc::new(FunSignature { name, args, result }))
    }

    /// A constant (function without arguments).
    pub fn constant(name: Symbol, sort: Sort) -> FunDecl {
        FunDecl::new(name, Vec::new(), sort)
    }

    pub fn name(&self) -> &Symbol {
        &self.0.name
    }

    pub fn args(&self) -> &[Sort] {
        &self.0.args
    }

    pub fn result(&self) -> &Sort {
        &self.0.result
    }
}

impl fmt::Debug for FunDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FunDecl({} : {:?} -> {:?})",
            self.0.name, self.0.args, self.0.result
        )
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum QuantifierKind {
    Forall,
    Exists,
}

/// A quantified formula with its instantiation hints.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Quantifier {
    pub kind: QuantifierKind,
    pub vars: Vec<(Symbol, Sort)>,
    pub body: Term,
    /// Each inner vector is one (multi-)pattern, printed `:pattern (t1 t2)`.
    pub triggers: Vec<Vec<Term>>,
    /// Quantifier id (`:qid`), shown in Z3's instantiation statistics.
    pub qid: Option<Symbol>,
    /// Instantiation weight (`:weight`).
    pub weight: Option<u32>,
}

impl Term {
    /// Wraps a kind and sort; the only way terms come into existence. Callers in
    /// [`crate::build`] are responsible for the sort.
    pub(crate) fn make(kind: TermKind, sort: Sort) -> Term {
        let mut hasher = DefaultHasher::new();
        kind.hash(&mut hasher);
        sort.hash(&mut hasher);
        let hash = hasher.finish();
        Term(Arc::new(Node { kind, sort, hash }))
    }

    pub fn kind(&self) -> &TermKind {
        &self.0.kind
    }

    pub fn sort(&self) -> &Sort {
        &self.0.sort
    }

    /// The identity of this handle's node (equal for handles to the same node).
    pub(crate) fn node_id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether both handles point to the same node (a sufficient test for equality).
    pub fn same_node(&self, other: &Term) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.kind() {
            TermKind::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn is_true(&self) -> bool {
        self.as_bool() == Some(true)
    }

    pub fn is_false(&self) -> bool {
        self.as_bool() == Some(false)
    }

    pub fn as_int(&self) -> Option<&IntLit> {
        match self.kind() {
            TermKind::Int(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_real(&self) -> Option<&RealLit> {
        match self.kind() {
            TermKind::Real(value) => Some(value),
            _ => None,
        }
    }

    /// The operator and arguments, if this is a built-in operator application.
    pub fn as_op(&self) -> Option<(Op, &[Term])> {
        match self.kind() {
            TermKind::Op(op, args) => Some((*op, args)),
            _ => None,
        }
    }

    /// Direct children, in printing order (quantifier triggers excluded).
    pub fn children(&self) -> Vec<&Term> {
        match self.kind() {
            TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) | TermKind::Var(_) => vec![],
            TermKind::App(_, args) | TermKind::Op(_, args) | TermKind::Builtin(_, args) => {
                args.iter().collect()
            }
            TermKind::Quantifier(q) => vec![&q.body],
            TermKind::Let(bindings, body) => bindings
                .iter()
                .map(|(_, t)| t)
                .chain(std::iter::once(body))
                .collect(),
        }
    }

    /// Whether the term contains one of `among` (each shared subterm visited once).
    pub fn mentions_any(&self, among: &HashSet<Term>) -> bool {
        fn walk(t: &Term, among: &HashSet<Term>, seen: &mut HashSet<Term>) -> bool {
            among.contains(t)
                || (seen.insert(t.clone())
                    && t.children().into_iter().any(|c| walk(c, among, seen)))
        }
        !among.is_empty() && walk(self, among, &mut HashSet::new())
    }

    /// Whether the term applies one of the functions named `names` (each shared subterm
    /// visited once).
    pub fn applies_any(&self, names: &HashSet<Symbol>) -> bool {
        fn walk(t: &Term, names: &HashSet<Symbol>, seen: &mut HashSet<Term>) -> bool {
            matches!(t.kind(), TermKind::App(f, _) if names.contains(f.name()))
                || (seen.insert(t.clone())
                    && t.children().into_iter().any(|c| walk(c, names, seen)))
        }
        !names.is_empty() && walk(self, names, &mut HashSet::new())
    }

    /// The subterms of the term that are in `among`, each once, in order of first
    /// occurrence (each shared subterm visited once).
    pub fn terms_among(&self, among: &HashSet<Term>) -> Vec<Term> {
        fn walk(t: &Term, among: &HashSet<Term>, seen: &mut HashSet<Term>, out: &mut Vec<Term>) {
            if !seen.insert(t.clone()) {
                return;
            }
            if among.contains(t) {
                out.push(t.clone());
                return;
            }
            for c in t.children() {
                walk(c, among, seen, out);
            }
        }
        let mut out = Vec::new();
        if !among.is_empty() {
            walk(self, among, &mut HashSet::new(), &mut out);
        }
        out
    }

    /// Number of nodes of the term seen as a tree (shared subterms counted each time).
    pub fn tree_size(&self) -> usize {
        let mut count = 0;
        let mut stack = vec![self];
        while let Some(term) = stack.pop() {
            count += 1;
            stack.extend(term.children());
        }
        count
    }
}

/// Structural equality, iterative (deep terms cannot overflow the stack), with pointer
/// equality and the cached hash as shortcuts at every node.
impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        let mut pending = vec![(self, other)];
        while let Some((a, b)) = pending.pop() {
            if a.same_node(b) {
                continue;
            }
            if a.0.hash != b.0.hash
                || a.0.sort != b.0.sort
                || !shallow_eq(&a.0.kind, &b.0.kind, &mut pending)
            {
                return false;
            }
        }
        true
    }
}

/// Compares everything but the child terms, which are queued in `pending`.
fn shallow_eq<'a>(
    a: &'a TermKind,
    b: &'a TermKind,
    pending: &mut Vec<(&'a Term, &'a Term)>,
) -> bool {
    use TermKind::*;
    let (xs, ys) = match (a, b) {
        (Bool(x), Bool(y)) => return x == y,
        (Int(x), Int(y)) => return x == y,
        (Real(x), Real(y)) => return x == y,
        (Var(x), Var(y)) => return x == y,
        (App(f, xs), App(g, ys)) if f == g => (xs, ys),
        (Op(o, xs), Op(p, ys)) if o == p => (xs, ys),
        (Builtin(h, xs), Builtin(k, ys)) if h == k => (xs, ys),
        (Quantifier(q), Quantifier(r)) => {
            if Arc::ptr_eq(q, r) {
                return true;
            }
            let same_shape = q.kind == r.kind
                && q.vars == r.vars
                && q.qid == r.qid
                && q.weight == r.weight
                && q.triggers.len() == r.triggers.len()
                && q.triggers
                    .iter()
                    .zip(&r.triggers)
                    .all(|(t, u)| t.len() == u.len());
            if same_shape {
                for (t, u) in q.triggers.iter().zip(&r.triggers) {
                    pending.extend(t.iter().zip(u));
                }
                pending.push((&q.body, &r.body));
            }
            return same_shape;
        }
        (Let(bs, body), Let(cs, other_body)) => {
            let same_names =
                bs.len() == cs.len() && bs.iter().zip(cs).all(|((n, _), (m, _))| n == m);
            if same_names {
                pending.extend(bs.iter().zip(cs).map(|((_, t), (_, u))| (t, u)));
                pending.push((body, other_body));
            }
            return same_names;
        }
        _ => return false,
    };
    if xs.len() != ys.len() {
        return false;
    }
    pending.extend(xs.iter().zip(ys));
    true
}

/// Dropping iteratively: a long chain of uniquely owned nodes would otherwise recurse once
/// per level. (Quantifier and `let` bodies are left to the ordinary drop; they do not nest
/// deeply in practice.)
impl Drop for Node {
    fn drop(&mut self) {
        let mut orphans = Vec::new();
        take_children(&mut self.kind, &mut orphans);
        while let Some(term) = orphans.pop() {
            if let Ok(mut node) = Arc::try_unwrap(term.0) {
                take_children(&mut node.kind, &mut orphans);
            }
        }
    }
}

/// Moves out the children of uniquely owned nodes that have children of their own.
fn take_children(kind: &mut TermKind, out: &mut Vec<Term>) {
    let args = match kind {
        TermKind::App(_, args) | TermKind::Op(_, args) | TermKind::Builtin(_, args) => args,
        _ => return,
    };
    let deep = args
        .iter()
        .any(|arg| Arc::strong_count(&arg.0) == 1 && has_arguments(arg));
    if deep {
        out.append(args);
    }
}

fn has_arguments(term: &Term) -> bool {
    matches!(term.kind(), TermKind::App(_, a) | TermKind::Op(_, a) | TermKind::Builtin(_, a) if !a.is_empty())
}

impl Eq for Term {}

impl Hash for Term {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The SMT-LIB text is the most readable form.
        write!(f, "{self}")
    }
}
