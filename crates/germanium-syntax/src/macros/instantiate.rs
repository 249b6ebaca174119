//! Copying a macro body for one use: parameters replaced by the arguments (by syntax tree),
//! declared names renamed when they would clash with names visible at the use (hygiene), every
//! node placed at the use's position (as Viper does, so errors inside point at the use) and
//! given a fresh id.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{
    Block, Expr, ExprKind, Ident, MacroBody, MacroDef, NodeId, NodeIdGen, Stmt, StmtKind, TypeExpr,
    TypeExprKind, VarDecl,
};
use crate::macros::walk::{expr_children_mut, stmt_children_mut, Child, ChildMut};
use crate::span::Span;
use crate::Diagnostic;

pub(super) struct Instantiator<'a> {
    pub ids: &'a mut NodeIdGen,
    /// Top-level names (visible at every use).
    pub globals: &'a HashSet<String>,
    /// Other names visible at the use; grows with the names the expansion declares.
    pub scope: &'a mut HashSet<String>,
    /// Last suffix used per renamed name (`x$0`, `x$1`, ...).
    pub counters: &'a mut HashMap<String, u32>,
    pub params: HashMap<String, &'a Expr>,
    pub span: Span,
    /// Renames of names declared by `var` and `label` anywhere in the body.
    flat_renames: HashMap<String, String>,
    /// Bound variables in scope inside the body, innermost last: (name, new name).
    binders: Vec<(String, String)>,
    pub error: Option<Diagnostic>,
    /// Macros visible at the use, to recognise nested macro uses in the body.
    macros: &'a HashMap<&'a str, &'a MacroDef>,
    /// Renames made by the enclosing instances this body was expanded from: a nested macro's
    /// free identifiers refer to the names of the instance that used it.
    inherited: Rc<Renames>,
    /// Nested macro uses copied here (by node id), with the renames their bodies must inherit;
    /// they are expanded only after this instance is spliced in.
    pending: &'a mut HashMap<NodeId, Rc<Renames>>,
}

/// Old name to new name.
pub(super) type Renames = HashMap<String, String>;

/// What an instance shares with the expander: the macro table, the renames pending for nested
/// macro uses, and those inherited by this instance.
pub(super) struct Nesting<'a> {
    pub macros: &'a HashMap<&'a str, &'a MacroDef>,
    pub pending: &'a mut HashMap<NodeId, Rc<Renames>>,
    pub inherited: Rc<Renames>,
}

impl<'a> Instantiator<'a> {
    pub fn new(
        ids: &'a mut NodeIdGen,
        globals: &'a HashSet<String>,
        scope: &'a mut HashSet<String>,
        counters: &'a mut HashMap<String, u32>,
        params: HashMap<String, &'a Expr>,
        span: Span,
        nesting: Nesting<'a>,
    ) -> Self {
        let Nesting {
            macros,
            pending,
            inherited,
        } = nesting;
        Instantiator {
            ids,
            globals,
            scope,
            counters,
            params,
            span,
            flat_renames: HashMap::new(),
            binders: Vec::new(),
            error: None,
            macros,
            inherited,
            pending,
        }
    }

    /// Records that node `id`, naming `name`, is a nested macro use, so that its body later
    /// inherits the renames in effect here.
    fn mark_nested_use(&mut self, id: NodeId, name: &str) {
        if !self.macros.contains_key(name) {
            return;
        }
        let mut renames = (*self.inherited).clone();
        renames.extend(
            self.flat_renames
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        renames.extend(self.binders.iter().cloned());
        renames.retain(|old, new| old != new);
        if !renames.is_empty() {
            self.pending.insert(id, Rc::new(renames));
        }
    }

    fn in_scope(&self, name: &str) -> bool {
        self.scope.contains(name) || self.globals.contains(name)
    }

    /// A name for a variable declared by the expansion: itself unless already in scope.
    fn declare(&mut self, name: &str) -> String {
        let new = if self.in_scope(name) {
            let mut n = self.counters.get(name).map_or(0, |n| n + 1);
            while self.in_scope(&format!("{name}${n}")) {
                n += 1;
            }
            self.counters.insert(name.to_string(), n);
            format!("{name}${n}")
        } else {
            name.to_string()
        };
        self.scope.insert(new.clone());
        new
    }

    pub fn body(&mut self, body: &MacroBody) -> MacroBody {
        match body {
            MacroBody::Expr(e) => {
                let mut e = e.clone();
                self.expr(&mut e);
                MacroBody::Expr(e)
            }
            MacroBody::Stmts(b) => {
                let mut b = b.clone();
                let mut declared = Vec::new();
                collect_stmt_decls(&b, &mut declared);
                for name in declared {
                    // A label named by a parameter is replaced by the argument instead.
                    if !self.flat_renames.contains_key(&name) && !self.params.contains_key(&name) {
                        let new = self.declare(&name);
                        self.flat_renames.insert(name, new);
                    }
                }
                self.block(&mut b);
                MacroBody::Stmts(b)
            }
        }
    }

    fn fail(&mut self, span: Span, msg: String) {
        if self.error.is_none() {
            self.error = Some(Diagnostic::parser(span, msg));
        }
    }

    /// What an identifier in the body refers to after renaming, or the argument replacing it.
    fn lookup(&self, name: &str) -> Lookup<'a> {
        if let Some((_, new)) = self.binders.iter().rev().find(|(n, _)| n == name) {
            return Lookup::Renamed(new.clone());
        }
        if let Some(arg) = self.params.get(name) {
            return Lookup::Arg(arg);
        }
        if let Some(new) = self
            .flat_renames
            .get(name)
            .or_else(|| self.inherited.get(name))
        {
            return Lookup::Renamed(new.clone());
        }
        Lookup::Keep
    }

    /// An identifier in a non-expression position (call name, field, label, type name):
    /// a parameter there must be given an identifier argument.
    fn ident_use(&mut self, id: &mut Ident) {
        match self.lookup(&id.name) {
            Lookup::Renamed(new) => id.name = new,
            Lookup::Arg(arg) => match &arg.kind {
                ExprKind::Ident(a) => id.name = a.name.clone(),
                _ => self.fail(
                    arg.span,
                    format!(
                        "macro expansion cannot substitute an expression for the identifier `{}`",
                        id.name
                    ),
                ),
            },
            Lookup::Keep => {}
        }
        id.span = self.span;
    }

    fn bind(&mut self, vars: &mut [VarDecl]) -> usize {
        for v in vars.iter_mut() {
            let new = self.declare(&v.name.name);
            self.binders.push((v.name.name.clone(), new.clone()));
            v.name.name = new;
            v.name.span = self.span;
            v.span = self.span;
            self.ty(&mut v.ty);
        }
        vars.len()
    }

    fn unbind(&mut self, n: usize) {
        let keep = self.binders.len().saturating_sub(n);
        self.binders.truncate(keep);
    }

    fn ty(&mut self, t: &mut TypeExpr) {
        t.span = self.span;
        match &mut t.kind {
            TypeExprKind::Seq(a) | TypeExprKind::Set(a) | TypeExprKind::Multiset(a) => self.ty(a),
            TypeExprKind::Map(a, b) => {
                self.ty(a);
                self.ty(b)
            }
            TypeExprKind::Named(name, args) => {
                self.ident_use(name);
                args.iter_mut().for_each(|a| self.ty(a));
            }
            _ => {}
        }
    }

    pub fn expr(&mut self, e: &mut Expr) {
        e.id = self.ids.fresh();
        e.span = self.span;
        match &mut e.kind {
            ExprKind::Ident(id) => match self.lookup(&id.name) {
                Lookup::Renamed(new) => {
                    id.name = new;
                    id.span = self.span;
                }
                Lookup::Arg(arg) => {
                    let mut copy = arg.clone();
                    self.place_copy(&mut copy);
                    *e = copy;
                }
                Lookup::Keep => {
                    id.span = self.span;
                    let name = id.name.clone();
                    self.mark_nested_use(e.id, &name);
                }
            },
            ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } => {
                let n = self.bind(vars);
                expr_children_mut(e, &mut |c| self.expr(c));
                self.unbind(n);
            }
            ExprKind::Let(x, value, body) => {
                self.expr(value);
                let new = self.declare(&x.name);
                self.binders.push((x.name.clone(), new.clone()));
                x.name = new;
                x.span = self.span;
                self.expr(body);
                self.unbind(1);
            }
            _ => {
                match &mut e.kind {
                    ExprKind::Call(name, _) | ExprKind::FieldAccess(_, name) => {
                        self.ident_use(name)
                    }
                    ExprKind::Old(Some(label), _) if label.name != "lhs" => self.ident_use(label),
                    ExprKind::Ascribed(_, t) => self.ty(t),
                    ExprKind::Collection(_, Some(t), _) => self.ty(t),
                    ExprKind::MapLit(Some((k, v)), _) => {
                        self.ty(k);
                        self.ty(v)
                    }
                    ExprKind::Annotated(a, _) => a.span = self.span,
                    _ => {}
                }
                if let ExprKind::Call(name, _) = &e.kind {
                    let name = name.name.clone();
                    self.mark_nested_use(e.id, &name);
                }
                expr_children_mut(e, &mut |c| self.expr(c));
            }
        }
    }

    /// An argument copied into the body: fresh ids and the use's position.
    fn place_copy(&mut self, e: &mut Expr) {
        let old = e.id;
        e.id = self.ids.fresh();
        // A macro use in the argument keeps the renames it was given.
        if let Some(r) = self.pending.get(&old).cloned() {
            self.pending.insert(e.id, r);
        }
        e.span = self.span;
        expr_children_mut(e, &mut |c| self.place_copy(c));
    }

    fn block(&mut self, b: &mut Block) {
        b.span = self.span;
        for s in &mut b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &mut Stmt) {
        s.id = self.ids.fresh();
        s.span = self.span;
        match &mut s.kind {
            StmtKind::VarDecl(vars, _) => {
                for v in vars.iter_mut() {
                    if let Some(new) = self.flat_renames.get(&v.name.name) {
                        v.name.name = new.clone();
                    }
                    v.name.span = self.span;
                    v.span = self.span;
                    self.ty(&mut v.ty);
                }
            }
            StmtKind::Label(name, _) => {
                if let Some(new) = self.flat_renames.get(&name.name) {
                    name.name = new.clone();
                    name.span = self.span;
                } else {
                    self.ident_use(name);
                }
            }
            StmtKind::Goto(name) => self.ident_use(name),
            StmtKind::MacroRef(name) | StmtKind::Call(name, _) => {
                self.ident_use(name);
                let name = name.name.clone();
                self.mark_nested_use(s.id, &name);
            }
            StmtKind::New(_, crate::ast::NewFields::Fields(fs)) => {
                fs.iter_mut().for_each(|f| self.ident_use(f))
            }
            StmtKind::Quasihavocall(vars, c, r) => {
                let n = self.bind(vars);
                if let Some(c) = c {
                    self.expr(c);
                }
                self.expr(r);
                self.unbind(n);
                return;
            }
            _ => {}
        }
        stmt_children_mut(s, &mut |c| match c {
            ChildMut::Expr(e) => self.expr(e),
            ChildMut::Block(b) => self.block(b),
        });
    }
}

enum Lookup<'a> {
    Renamed(String),
    Arg(&'a Expr),
    Keep,
}

/// Names declared by `var` and `label` statements anywhere in `b`.
pub(super) fn collect_stmt_decls(b: &Block, out: &mut Vec<String>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::VarDecl(vars, _) => out.extend(vars.iter().map(|v| v.name.name.clone())),
            StmtKind::Label(name, _) => out.push(name.name.clone()),
            _ => {}
        }
        crate::macros::walk::stmt_children(s, &mut |c| {
            if let Child::Block(inner) = c {
                collect_stmt_decls(inner, out)
            }
        });
    }
}
