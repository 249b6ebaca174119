//! Expanding macro uses inside one declaration.
//!
//! As in Viper, any identifier that names a macro is a use: an expression `A` or `A(x)`, a
//! statement `A` or `A(x)`, and also a name in another position (a called function, a field,
//! a label), where the macro must stand for a plain identifier. Expansion stops at the first
//! problem, which is reported at the use.

use std::collections::{HashMap, HashSet};

use std::rc::Rc;

use super::instantiate::{Instantiator, Nesting, Renames};
use crate::ast::{
    Block, Expr, ExprKind, Ident, MacroBody, MacroDef, NodeId, NodeIdGen, Stmt, StmtKind, TypeExpr,
    TypeExprKind,
};
use crate::macros::walk::{expr_children_mut, stmt_children_mut, ChildMut};
use crate::span::Span;
use crate::Diagnostic;

/// Expansions nested deeper than this are reported (cycles are caught before; this bounds
/// pathological but acyclic programs).
const MAX_EXPANSION_DEPTH: u32 = 200;

pub(super) struct Expander<'a> {
    pub macros: &'a HashMap<&'a str, &'a MacroDef>,
    pub ids: &'a mut NodeIdGen,
    /// Top-level names, shared by all declarations (not copied per declaration, which made
    /// expansion quadratic in the number of declarations).
    pub globals: &'a HashSet<String>,
    /// Names declared inside this declaration, plus those its expansions declare.
    pub scope: HashSet<String>,
    pub counters: HashMap<String, u32>,
    pub error: Option<Diagnostic>,
    depth: u32,
    /// Nested macro uses copied from a macro body, with the renames of that instance, which
    /// their own bodies must apply (Viper renames a macro's locals consistently).
    pending: HashMap<NodeId, Rc<Renames>>,
}

type R = Result<(), ()>;

impl<'a> Expander<'a> {
    pub fn new(
        macros: &'a HashMap<&'a str, &'a MacroDef>,
        ids: &'a mut NodeIdGen,
        globals: &'a HashSet<String>,
        scope: HashSet<String>,
    ) -> Self {
        Expander {
            macros,
            ids,
            globals,
            scope,
            counters: HashMap::new(),
            error: None,
            depth: 0,
            pending: HashMap::new(),
        }
    }

    fn fail(&mut self, span: Span, msg: impl Into<String>) -> R {
        if self.error.is_none() {
            self.error = Some(Diagnostic::parser(span, msg));
        }
        Err(())
    }

    fn lookup(&self, name: &str) -> Option<&'a MacroDef> {
        self.macros.get(name).copied()
    }

    /// Copies `def`'s body for the use `use_id` at `span` with `args`.
    fn instantiate(
        &mut self,
        def: &'a MacroDef,
        args: &[Expr],
        span: Span,
        use_id: NodeId,
    ) -> Result<MacroBody, ()> {
        if def.params.as_ref().map_or(0, Vec::len) != args.len() {
            self.fail(span, "Number of macro arguments does not match")?;
        }
        if self.depth >= MAX_EXPANSION_DEPTH {
            self.fail(span, "macro expansion nested too deeply")?;
        }
        // Names declared in the arguments are visible at the use, too.
        for a in args {
            collect_expr_decls(a, &mut self.scope);
        }
        let params: HashMap<String, &Expr> = def
            .params
            .iter()
            .flatten()
            .map(|p| p.name.clone())
            .zip(args.iter())
            .collect();
        let inherited = self.pending.remove(&use_id).unwrap_or_default();
        let nesting = Nesting {
            macros: self.macros,
            pending: &mut self.pending,
            inherited,
        };
        let mut inst = Instantiator::new(
            self.ids,
            self.globals,
            &mut self.scope,
            &mut self.counters,
            params,
            span,
            nesting,
        );
        let body = inst.body(&def.body);
        if let Some(e) = inst.error {
            if self.error.is_none() {
                self.error = Some(e);
            }
            return Err(());
        }
        Ok(body)
    }

    /// A macro name used as a plain identifier (called function, field, label, type): the
    /// macro must have no parameters and stand for an identifier.
    fn ident_use(&mut self, id: &mut Ident, position: &str) -> R {
        let mut guard = 0;
        while let Some(def) = self.lookup(&id.name) {
            guard += 1;
            if guard > MAX_EXPANSION_DEPTH {
                return self.fail(id.span, "macro expansion nested too deeply");
            }
            if let Some(ps) = &def.params {
                return self.fail(id.span, with_params_msg(&def.name.name, ps));
            }
            match &def.body {
                MacroBody::Expr(Expr {
                    kind: ExprKind::Ident(target),
                    ..
                }) => id.name = target.name.clone(),
                MacroBody::Expr(_) => {
                    return self.fail(
                        id.span,
                        format!("Expression macro used in {position} position"),
                    )
                }
                MacroBody::Stmts(_) => {
                    return self.fail(
                        id.span,
                        format!("Statement macro used in {position} position"),
                    )
                }
            }
        }
        Ok(())
    }

    pub fn ty(&mut self, t: &mut TypeExpr) -> R {
        match &mut t.kind {
            TypeExprKind::Seq(a) | TypeExprKind::Set(a) | TypeExprKind::Multiset(a) => self.ty(a),
            TypeExprKind::Map(a, b) => {
                self.ty(a)?;
                self.ty(b)
            }
            TypeExprKind::Named(name, args) => {
                if let Some(def) = self.lookup(&name.name) {
                    let kind = if matches!(def.body, MacroBody::Expr(_)) {
                        "Expression"
                    } else {
                        "Statement"
                    };
                    return self.fail(name.span, format!("{kind} macro used in type position"));
                }
                args.iter_mut().try_for_each(|a| self.ty(a))
            }
            _ => Ok(()),
        }
    }

    pub fn expr(&mut self, e: &mut Expr) -> R {
        // Expand a use at the root first; the result is expanded again (it may be a use).
        'root: {
            let (name, args, span) = match &e.kind {
                ExprKind::Ident(id) => (id.name.as_str(), &[][..], e.span),
                ExprKind::Call(id, args) => (id.name.as_str(), args.as_slice(), e.span),
                _ => break 'root,
            };
            let Some(def) = self.lookup(name) else {
                break 'root;
            };
            let is_call = matches!(e.kind, ExprKind::Call(..));
            if is_call && def.params.is_none() {
                break 'root; // `b()` with `define b ...`: the name alone is the use (below).
            }
            if !is_call {
                if let Some(ps) = &def.params {
                    return self.fail(span, with_params_msg(&def.name.name, ps));
                }
            }
            let args = args.to_vec();
            let body = self.instantiate(def, &args, span, e.id)?;
            match body {
                MacroBody::Expr(b) => *e = b,
                MacroBody::Stmts(_) => {
                    return self.fail(span, "Statement macro used in expression position")
                }
            }
            self.depth += 1;
            let r = self.expr(e);
            self.depth -= 1;
            return r;
        }
        match &mut e.kind {
            ExprKind::Call(name, _) | ExprKind::FieldAccess(_, name) => {
                self.ident_use(name, "identifier")?
            }
            ExprKind::Old(Some(label), _) if label.name != "lhs" => {
                self.ident_use(label, "identifier")?
            }
            ExprKind::Ascribed(_, t) | ExprKind::Collection(_, Some(t), _) => self.ty(t)?,
            ExprKind::MapLit(Some((k, v)), _) => {
                self.ty(k)?;
                self.ty(v)?
            }
            ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } => {
                vars.iter_mut().try_for_each(|v| self.ty(&mut v.ty))?
            }
            _ => {}
        }
        let mut r = Ok(());
        expr_children_mut(e, &mut |c| {
            if r.is_ok() {
                r = self.expr(c);
            }
        });
        r?;
        // Positions that need a location: a macro must expand to one.
        match &e.kind {
            ExprKind::Acc(loc, _) => self.check_location(loc, false),
            ExprKind::Perm(loc) => self.check_location(loc, true),
            ExprKind::Forperm { resources, .. } => resources
                .iter()
                .try_for_each(|r| self.check_location(r, true)),
            ExprKind::Unfolding(p, _) => self.check_predicate_access(p),
            _ => Ok(()),
        }
    }

    fn check_location(&mut self, e: &Expr, allow_wand: bool) -> R {
        match &e.kind {
            ExprKind::FieldAccess(..) | ExprKind::Call(..) => Ok(()),
            ExprKind::Binary(crate::ast::BinaryOp::Wand, ..) if allow_wand => Ok(()),
            _ => self.fail(
                e.span,
                "Macro expansion would result in invalid code: a location access is required in this position",
            ),
        }
    }

    fn check_predicate_access(&mut self, e: &Expr) -> R {
        match &e.kind {
            ExprKind::Call(..) => Ok(()),
            ExprKind::Acc(loc, _) if matches!(loc.kind, ExprKind::Call(..)) => Ok(()),
            _ => self.fail(e.span, "Macro expansion would result in invalid code: a predicate access is required in this position"),
        }
    }

    pub fn block(&mut self, b: &mut Block) -> R {
        let old = std::mem::take(&mut b.stmts);
        let mut out = Vec::with_capacity(old.len());
        // Work list, so spliced statement macros are expanded in turn.
        let mut todo: Vec<Stmt> = old.into_iter().rev().collect();
        let mut guard = 0u32;
        while let Some(mut s) = todo.pop() {
            match self.stmt_macro_use(&s)? {
                Some(stmts) => {
                    guard += 1;
                    if guard > 100_000 {
                        return self.fail(s.span, "macro expansion produces too many statements");
                    }
                    todo.extend(stmts.into_iter().rev());
                }
                None => {
                    if matches!(s.kind, StmtKind::Define(_)) {
                        continue; // Local macros were collected before expansion.
                    }
                    self.stmt(&mut s)?;
                    out.push(s);
                }
            }
        }
        b.stmts = out;
        Ok(())
    }

    /// The statements replacing `s` if it uses a statement macro.
    fn stmt_macro_use(&mut self, s: &Stmt) -> Result<Option<Vec<Stmt>>, ()> {
        let (name, args) = match &s.kind {
            StmtKind::MacroRef(id) => (id, &[][..]),
            StmtKind::Call(id, args) => (id, args.as_slice()),
            _ => return Ok(None),
        };
        let Some(def) = self.lookup(&name.name) else {
            return Ok(None);
        };
        if matches!(s.kind, StmtKind::Call(..)) && def.params.is_none() {
            return Ok(None); // the name alone is a use, handled in `stmt`
        }
        if matches!(s.kind, StmtKind::MacroRef(_)) {
            if let Some(ps) = &def.params {
                self.fail(s.span, with_params_msg(&def.name.name, ps))?;
            }
        }
        let args = args.to_vec();
        match self.instantiate(def, &args, s.span, s.id)? {
            MacroBody::Stmts(b) => Ok(Some(b.stmts)),
            MacroBody::Expr(_) => {
                self.fail(s.span, "Expression macro used in statement position")?;
                Ok(None)
            }
        }
    }

    fn stmt(&mut self, s: &mut Stmt) -> R {
        match &mut s.kind {
            StmtKind::Assign(targets, _) => {
                for t in targets.iter_mut() {
                    if let ExprKind::Call(name, _) = &t.kind {
                        let is_macro = self.lookup(&name.name).is_some_and(|d| d.params.is_some());
                        if !is_macro {
                            return self.fail(
                                t.span,
                                "The only calls that can be on the left-hand side of an assignment statement are calls to macros",
                            );
                        }
                        let was_call = t.span;
                        self.expr(t)?;
                        if !matches!(t.kind, ExprKind::Ident(_) | ExprKind::FieldAccess(..)) {
                            return self.fail(
                                was_call,
                                "The body of this macro is not a suitable left-hand side for an assignment statement",
                            );
                        }
                    }
                }
            }
            StmtKind::Call(name, _) | StmtKind::Goto(name) => self.ident_use(name, "identifier")?,
            StmtKind::New(_, crate::ast::NewFields::Fields(fs)) => fs
                .iter_mut()
                .try_for_each(|f| self.ident_use(f, "identifier"))?,
            StmtKind::VarDecl(vars, _) | StmtKind::Quasihavocall(vars, ..) => {
                vars.iter_mut().try_for_each(|v| self.ty(&mut v.ty))?
            }
            _ => {}
        }
        let mut r = Ok(());
        stmt_children_mut(s, &mut |c| {
            if r.is_ok() {
                r = match c {
                    ChildMut::Expr(e) => self.expr(e),
                    ChildMut::Block(b) => self.block(b),
                };
            }
        });
        r?;
        match &s.kind {
            StmtKind::Assign(targets, _) => {
                for t in targets {
                    if !matches!(t.kind, ExprKind::Ident(_) | ExprKind::FieldAccess(..)) {
                        return self.fail(t.span, "Macro expansion would result in invalid code: not an assignment target");
                    }
                }
                Ok(())
            }
            StmtKind::New(t, _)
                if !matches!(t.kind, ExprKind::Ident(_) | ExprKind::FieldAccess(..)) =>
            {
                self.fail(
                    t.span,
                    "Macro expansion would result in invalid code: not an assignment target",
                )
            }
            StmtKind::Fold(p) | StmtKind::Unfold(p) => self.check_predicate_access(p),
            _ => Ok(()),
        }
    }
}

fn with_params_msg(name: &str, params: &[Ident]) -> String {
    let ps: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    format!(
        "macro `{name}` is defined with parameters but referenced without, try adding `({})`",
        ps.join(", ")
    )
}

/// Adds the names bound inside `e` (quantified and let variables).
pub(super) fn collect_expr_decls(e: &Expr, out: &mut HashSet<String>) {
    match &e.kind {
        ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } => {
            out.extend(vars.iter().map(|v| v.name.name.clone()))
        }
        ExprKind::Let(x, ..) => {
            out.insert(x.name.clone());
        }
        _ => {}
    }
    crate::macros::walk::expr_children(e, &mut |c| collect_expr_decls(c, out));
}
