//! Expansion of `define` macros, following Viper's `MacroExpander`:
//!
//! - Global macros (top level) are visible everywhere; a method also sees the macros defined
//!   anywhere in its body. Macro names must be unique and differ from the names of domains,
//!   functions, predicates and methods; macros may not be defined in a wand's proof script.
//! - Uses are expanded in domains, functions, predicates and methods; a statement macro's
//!   statements are spliced into the enclosing block. Arguments replace parameters by syntax
//!   tree; variables the body declares are renamed (`x$0`) if the name is already visible at
//!   the use; every copied node gets the use's position and a fresh id.
//! - Recursive macros and misuses (wrong number of arguments, a statement macro in an
//!   expression, ...) are `parser.error`s; as in Viper, the first one stops expansion.
//!   Unused parameters give a `parser.warning`.
//!
//! Afterwards the abstract read permissions `rd`, `rdw`, `globalRd`, `rdc(n)`, `rd_token(e)`
//! and `rd_token_fresh(e)` become [`ExprKind::ReadPerm`] unless the program declares that name.

mod expand;
mod instantiate;
mod readperm;
pub mod walk;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use crate::ast::{
    Block, Expr, ExprKind, Item, ItemKind, MacroBody, MacroDef, NodeIdGen, Program, Stmt, StmtKind,
    TypeExpr, TypeExprKind,
};
use crate::macros::walk::{expr_children, stmt_children, Child, ChildMut};
use crate::Diagnostic;
use expand::Expander;

/// Identifier of the warning for unused macro parameters.
pub const PARSER_WARNING: &str = "parser.warning";

/// Replaces every use of a `define` macro in `program` by its body, giving copied nodes fresh
/// ids, and removes the macro definitions. Sets `program.macros_expanded`.
pub fn expand_macros(program: &mut Program, ids: &mut NodeIdGen) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let globals: Vec<MacroDef> = program
        .items
        .iter()
        .filter_map(|i| {
            if let ItemKind::Macro(m) = &i.kind {
                Some(m.clone())
            } else {
                None
            }
        })
        .collect();
    check_global_macros(&program.items, &globals, &mut diags);
    for m in &globals {
        warn_unused_params(m, &mut diags);
    }
    let global_names = global_names(&program.items);
    // The first definition of a name wins (duplicates are reported above).
    let global_table: HashMap<&str, &MacroDef> = globals
        .iter()
        .rev()
        .map(|m| (m.name.name.as_str(), m))
        .collect();

    let mut stopped = false;
    for item in program.items.iter_mut() {
        let locals = local_macros(item);
        check_wand_defines(item, &mut diags);
        for m in &locals {
            warn_unused_params(m, &mut diags);
        }
        if stopped {
            strip_defines(item);
            continue;
        }
        // Local macros shadow global ones; only declarations that have some get their own
        // table (rebuilding the global one per declaration was quadratic).
        let with_locals: HashMap<&str, &MacroDef>;
        let table = if locals.is_empty() {
            &global_table
        } else {
            let mut t = global_table.clone();
            for m in locals.iter().rev() {
                t.insert(m.name.name.as_str(), m);
            }
            with_locals = t;
            &with_locals
        };
        if let Some(d) = detect_cycles(item, table) {
            diags.push(d);
            stopped = true;
            strip_defines(item);
            continue;
        }
        let mut scope = HashSet::new();
        collect_item_decls(item, &mut scope);
        let mut ex = Expander::new(table, ids, &global_names, scope);
        if expand_item(&mut ex, item).is_err() {
            if let Some(d) = ex.error.take() {
                diags.push(d);
            }
            stopped = true;
            strip_defines(item);
        }
    }
    let (defines, items): (Vec<Item>, Vec<Item>) = std::mem::take(&mut program.items)
        .into_iter()
        .partition(|i| matches!(i.kind, ItemKind::Macro(_)));
    program.items = items;
    program.expanded_macros.extend(defines);
    readperm::resolve_read_perms(program, ids);
    program.macros_expanded = true;
    diags
}

fn expand_item(ex: &mut Expander<'_>, item: &mut Item) -> Result<(), ()> {
    match &mut item.kind {
        ItemKind::Method(m) => {
            for p in m.params.iter_mut().chain(m.returns.iter_mut()) {
                expand_type(ex, &mut p.ty)?;
            }
            expand_contract(ex, &mut m.contract)?;
            if let Some(b) = &mut m.body {
                ex.block(b)?;
            }
        }
        ItemKind::Function(f) => {
            for p in &mut f.params {
                expand_type(ex, &mut p.ty)?;
            }
            expand_type(ex, &mut f.result)?;
            expand_contract(ex, &mut f.contract)?;
            if let Some(b) = &mut f.body {
                ex.expr(b)?;
            }
        }
        ItemKind::Predicate(p) => {
            for a in &mut p.params {
                expand_type(ex, &mut a.ty)?;
            }
            if let Some(b) = &mut p.body {
                ex.expr(b)?;
            }
        }
        ItemKind::Domain(d) => {
            for f in &mut d.functions {
                for p in &mut f.params {
                    expand_type(ex, &mut p.ty)?;
                }
                expand_type(ex, &mut f.result)?;
            }
            for a in &mut d.axioms {
                ex.expr(&mut a.body)?;
            }
        }
        ItemKind::Import(_) | ItemKind::Field(_) | ItemKind::Adt(_) | ItemKind::Macro(_) => {}
    }
    Ok(())
}

fn expand_type(ex: &mut Expander<'_>, t: &mut TypeExpr) -> Result<(), ()> {
    ex.ty(t)
}

fn expand_contract(ex: &mut Expander<'_>, c: &mut crate::ast::Contract) -> Result<(), ()> {
    for e in c.requires.iter_mut().chain(c.ensures.iter_mut()) {
        ex.expr(e)?;
    }
    for d in &mut c.decreases {
        let mut r = Ok(());
        let mut f = |e: &mut Expr| {
            if r.is_ok() {
                r = ex.expr(e);
            }
        };
        if let crate::ast::DecreasesKind::Tuple(es) = &mut d.kind {
            es.iter_mut().for_each(&mut f);
        }
        if let Some(e) = &mut d.condition {
            f(e);
        }
        r?;
    }
    Ok(())
}

/// Duplicate macro names, and macro names taken by other declarations.
fn check_global_macros(items: &[Item], globals: &[MacroDef], diags: &mut Vec<Diagnostic>) {
    let mut first: HashMap<&str, &MacroDef> = HashMap::new();
    for m in globals {
        if let Some(prev) = first.get(m.name.name.as_str()) {
            let _ = prev;
            diags.push(Diagnostic::parser(
                m.span,
                format!("another macro named `{}` already exists", m.name.name),
            ));
        } else {
            first.insert(&m.name.name, m);
        }
    }
    let mut reported = HashSet::new();
    for item in items {
        let name = match &item.kind {
            ItemKind::Method(m) => &m.name.name,
            ItemKind::Function(f) => &f.name.name,
            ItemKind::Predicate(p) => &p.name.name,
            ItemKind::Domain(d) => &d.name.name,
            _ => continue,
        };
        if let Some(m) = first.get(name.as_str()) {
            if reported.insert(name.clone()) {
                diags.push(Diagnostic::parser(
                    m.span,
                    format!("the macro name `{name}` has already been used by another identifier"),
                ));
            }
        }
    }
}

fn warn_unused_params(m: &MacroDef, diags: &mut Vec<Diagnostic>) {
    let Some(params) = &m.params else { return };
    let mut used = HashSet::new();
    match &m.body {
        MacroBody::Expr(e) => uses_in_expr(e, &mut |n| {
            used.insert(n.to_string());
        }),
        MacroBody::Stmts(b) => {
            uses_in_block(b, &mut |n| {
                used.insert(n.to_string());
            });
            // A parameter may name a label the body declares.
            let mut declared = Vec::new();
            instantiate::collect_stmt_decls(b, &mut declared);
            used.extend(declared);
        }
    }
    let unused: Vec<&str> = params
        .iter()
        .map(|p| p.name.as_str())
        .filter(|p| !used.contains(*p))
        .collect();
    if !unused.is_empty() {
        diags.push(Diagnostic::warning(
            PARSER_WARNING,
            m.span,
            format!(
                "in macro `{}`, the following parameters were defined but not used: {}",
                m.name.name,
                unused.join(", ")
            ),
        ));
    }
}

/// Macros defined inside a method's body.
fn local_macros(item: &Item) -> Vec<MacroDef> {
    let mut out = Vec::new();
    if let ItemKind::Method(m) = &item.kind {
        if let Some(b) = &m.body {
            collect_defines(b, &mut out);
        }
    }
    out
}

fn collect_defines(b: &Block, out: &mut Vec<MacroDef>) {
    for s in &b.stmts {
        if let StmtKind::Define(d) = &s.kind {
            out.push((**d).clone());
        }
        stmt_children(s, &mut |c| {
            if let Child::Block(inner) = c {
                collect_defines(inner, out)
            }
        });
    }
}

/// `define` inside a `package` proof script is an error.
fn check_wand_defines(item: &Item, diags: &mut Vec<Diagnostic>) {
    fn in_block(b: &Block, inside: bool, diags: &mut Vec<Diagnostic>) {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Define(d) if inside => diags.push(Diagnostic::parser(
                    d.span,
                    "macros cannot be defined inside magic wands proof scripts",
                )),
                StmtKind::Package(_, Some(proof)) => in_block(proof, true, diags),
                _ => stmt_children(s, &mut |c| {
                    if let Child::Block(inner) = c {
                        in_block(inner, inside, diags)
                    }
                }),
            }
        }
    }
    if let ItemKind::Method(m) = &item.kind {
        if let Some(b) = &m.body {
            in_block(b, false, diags);
        }
    }
}

fn strip_defines(item: &mut Item) {
    fn strip(b: &mut Block) {
        b.stmts.retain(|s| !matches!(s.kind, StmtKind::Define(_)));
        for s in &mut b.stmts {
            walk::stmt_children_mut(s, &mut |c| {
                if let ChildMut::Block(inner) = c {
                    strip(inner)
                }
            });
        }
    }
    if let ItemKind::Method(m) = &mut item.kind {
        if let Some(b) = &mut m.body {
            strip(b);
        }
    }
}

/// Viper's check for recursive macros: follows each use into the macro's body; a macro met
/// again on the way is reported at its definition.
fn detect_cycles(item: &Item, table: &HashMap<&str, &MacroDef>) -> Option<Diagnostic> {
    struct Cycles<'t, 'm> {
        table: &'t HashMap<&'m str, &'m MacroDef>,
        path: Vec<String>,
        acyclic: HashSet<String>,
        error: Option<Diagnostic>,
    }
    impl Cycles<'_, '_> {
        fn visit(&mut self, name: &str) {
            if self.error.is_some() || self.acyclic.contains(name) {
                return;
            }
            let Some(def) = self.table.get(name).copied() else {
                return;
            };
            if self.path.iter().any(|p| p == name) {
                self.error = Some(Diagnostic::parser(
                    def.span,
                    format!("Recursive macro declaration found: {name}"),
                ));
                return;
            }
            self.path.push(name.to_string());
            let mut names = Vec::new();
            match &def.body {
                MacroBody::Expr(e) => uses_in_expr(e, &mut |n| names.push(n.to_string())),
                MacroBody::Stmts(b) => uses_in_block(b, &mut |n| names.push(n.to_string())),
            }
            for n in names {
                self.visit(&n);
            }
            self.path.pop();
            if self.error.is_none() {
                self.acyclic.insert(name.to_string());
            }
        }
    }
    let mut names = Vec::new();
    uses_in_item(item, &mut |n| names.push(n.to_string()));
    let mut c = Cycles {
        table,
        path: Vec::new(),
        acyclic: HashSet::new(),
        error: None,
    };
    for n in names {
        c.visit(&n);
        if c.error.is_some() {
            break;
        }
    }
    c.error
}

// --- names used and declared -----------------------------------------------------------

/// Every identifier in a use position (expressions, called names, fields, labels, types).
fn uses_in_expr(e: &Expr, f: &mut dyn FnMut(&str)) {
    match &e.kind {
        ExprKind::Ident(id) | ExprKind::Call(id, _) | ExprKind::FieldAccess(_, id) => f(&id.name),
        ExprKind::Old(Some(l), _) => f(&l.name),
        ExprKind::Ascribed(_, t) | ExprKind::Collection(_, Some(t), _) => uses_in_type(t, f),
        ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } => {
            vars.iter().for_each(|v| uses_in_type(&v.ty, f))
        }
        _ => {}
    }
    expr_children(e, &mut |c| uses_in_expr(c, f));
}

fn uses_in_type(t: &TypeExpr, f: &mut dyn FnMut(&str)) {
    match &t.kind {
        TypeExprKind::Seq(a) | TypeExprKind::Set(a) | TypeExprKind::Multiset(a) => {
            uses_in_type(a, f)
        }
        TypeExprKind::Map(a, b) => {
            uses_in_type(a, f);
            uses_in_type(b, f)
        }
        TypeExprKind::Named(n, args) => {
            f(&n.name);
            args.iter().for_each(|a| uses_in_type(a, f));
        }
        _ => {}
    }
}

fn uses_in_stmt(s: &Stmt, f: &mut dyn FnMut(&str)) {
    match &s.kind {
        StmtKind::Call(id, _) | StmtKind::MacroRef(id) | StmtKind::Goto(id) => f(&id.name),
        StmtKind::New(_, crate::ast::NewFields::Fields(fs)) => fs.iter().for_each(|x| f(&x.name)),
        StmtKind::VarDecl(vars, _) | StmtKind::Quasihavocall(vars, ..) => {
            vars.iter().for_each(|v| uses_in_type(&v.ty, f))
        }
        StmtKind::Define(_) => return,
        _ => {}
    }
    stmt_children(s, &mut |c| match c {
        Child::Expr(e) => uses_in_expr(e, f),
        Child::Block(b) => uses_in_block(b, f),
    });
}

fn uses_in_block(b: &Block, f: &mut dyn FnMut(&str)) {
    b.stmts.iter().for_each(|s| uses_in_stmt(s, f));
}

fn uses_in_item(item: &Item, f: &mut dyn FnMut(&str)) {
    match &item.kind {
        ItemKind::Method(m) => {
            m.params
                .iter()
                .chain(&m.returns)
                .for_each(|p| uses_in_type(&p.ty, f));
            contract_exprs(&m.contract, &mut |e| uses_in_expr(e, f));
            if let Some(b) = &m.body {
                uses_in_block(b, f);
            }
        }
        ItemKind::Function(func) => {
            func.params.iter().for_each(|p| uses_in_type(&p.ty, f));
            uses_in_type(&func.result, f);
            contract_exprs(&func.contract, &mut |e| uses_in_expr(e, f));
            if let Some(b) = &func.body {
                uses_in_expr(b, f);
            }
        }
        ItemKind::Predicate(p) => {
            p.params.iter().for_each(|a| uses_in_type(&a.ty, f));
            if let Some(b) = &p.body {
                uses_in_expr(b, f);
            }
        }
        ItemKind::Domain(d) => {
            for func in &d.functions {
                func.params.iter().for_each(|p| uses_in_type(&p.ty, f));
                uses_in_type(&func.result, f);
            }
            d.axioms.iter().for_each(|a| uses_in_expr(&a.body, f));
        }
        _ => {}
    }
}

fn contract_exprs(c: &crate::ast::Contract, f: &mut dyn FnMut(&Expr)) {
    c.requires.iter().chain(&c.ensures).for_each(&mut *f);
    for d in &c.decreases {
        walk::decreases_exprs(d, f);
    }
}

/// Names of the program's top-level declarations and their members.
fn global_names(items: &[Item]) -> HashSet<String> {
    let mut names = HashSet::new();
    for item in items {
        match &item.kind {
            ItemKind::Field(fs) => names.extend(fs.iter().map(|f| f.name.name.clone())),
            ItemKind::Method(m) => {
                names.insert(m.name.name.clone());
            }
            ItemKind::Function(f) => {
                names.insert(f.name.name.clone());
            }
            ItemKind::Predicate(p) => {
                names.insert(p.name.name.clone());
            }
            ItemKind::Domain(d) => {
                names.insert(d.name.name.clone());
                names.extend(d.functions.iter().map(|f| f.name.name.clone()));
            }
            ItemKind::Adt(a) => {
                names.insert(a.name.name.clone());
                for c in &a.constructors {
                    names.insert(c.name.name.clone());
                    names.extend(c.fields.iter().map(|f| f.name.name.clone()));
                }
            }
            ItemKind::Macro(m) => {
                names.insert(m.name.name.clone());
            }
            ItemKind::Import(_) => {}
        }
    }
    names
}

/// Names a declaration declares inside: parameters, results, locals, bound variables, labels.
pub(crate) fn collect_item_decls(item: &Item, out: &mut HashSet<String>) {
    let on_expr = |e: &Expr, out: &mut HashSet<String>| expand::collect_expr_decls(e, out);
    match &item.kind {
        ItemKind::Method(m) => {
            out.extend(
                m.params
                    .iter()
                    .chain(&m.returns)
                    .map(|p| p.name.name.clone()),
            );
            contract_exprs(&m.contract, &mut |e| on_expr(e, out));
            if let Some(b) = &m.body {
                block_decls(b, out);
            }
        }
        ItemKind::Function(f) => {
            out.extend(f.params.iter().map(|p| p.name.name.clone()));
            contract_exprs(&f.contract, &mut |e| on_expr(e, out));
            if let Some(b) = &f.body {
                on_expr(b, out);
            }
        }
        ItemKind::Predicate(p) => {
            out.extend(p.params.iter().map(|p| p.name.name.clone()));
            if let Some(b) = &p.body {
                on_expr(b, out);
            }
        }
        ItemKind::Domain(d) => {
            for f in &d.functions {
                out.extend(
                    f.params
                        .iter()
                        .filter_map(|p| p.name.as_ref().map(|n| n.name.clone())),
                );
            }
            d.axioms.iter().for_each(|a| on_expr(&a.body, out));
        }
        _ => {}
    }
}

fn block_decls(b: &Block, out: &mut HashSet<String>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::VarDecl(vars, _) | StmtKind::Quasihavocall(vars, ..) => {
                out.extend(vars.iter().map(|v| v.name.name.clone()))
            }
            StmtKind::Label(l, _) => {
                out.insert(l.name.clone());
            }
            StmtKind::Define(_) => continue,
            _ => {}
        }
        stmt_children(s, &mut |c| match c {
            Child::Expr(e) => expand::collect_expr_decls(e, out),
            Child::Block(inner) => block_decls(inner, out),
        });
    }
}
