//! Who calls whom, read off the program's syntax once: the method and function call
//! graphs (for recursion clusters, function heights and termination), and whether a
//! `decreases` clause asks for a termination proof. Both back ends read these.

use std::collections::{HashMap, HashSet};

use germanium_syntax::ast::{Decreases, DecreasesKind, Expr, ItemKind, Program, Stmt, StmtKind};

use crate::{CallTarget, Semantics};

/// Which methods each method calls (for recursion clusters).
pub fn call_graph(program: &Program, sem: &Semantics) -> HashMap<String, HashSet<String>> {
    fn walk(stmts: &[Stmt], sem: &Semantics, out: &mut HashSet<String>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Call(..) => {
                    if let Some(CallTarget::Method(m)) = sem.call(s.id) {
                        out.insert(m.clone());
                    }
                }
                StmtKind::Assign(_, rhs) => {
                    if let Some(CallTarget::Method(m)) = sem.call(rhs.id) {
                        out.insert(m.clone());
                    }
                }
                StmtKind::Block(b) | StmtKind::While { body: b, .. } => walk(&b.stmts, sem, out),
                StmtKind::If {
                    then, otherwise, ..
                } => {
                    walk(&then.stmts, sem, out);
                    if let Some(o) = otherwise {
                        walk(&o.stmts, sem, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut graph = HashMap::new();
    for item in &program.items {
        if let ItemKind::Method(m) = &item.kind {
            let mut out = HashSet::new();
            if let Some(b) = &m.body {
                walk(&b.stmts, sem, &mut out);
            }
            graph.insert(m.name.name.clone(), out);
        }
    }
    graph
}

/// Which functions each function's body calls.
pub fn function_call_graph(program: &Program, sem: &Semantics) -> HashMap<String, HashSet<String>> {
    let mut graph = HashMap::new();
    for item in &program.items {
        if let ItemKind::Function(f) = &item.kind {
            let mut out = HashSet::new();
            let exprs = f
                .body
                .iter()
                .chain(&f.contract.requires)
                .chain(&f.contract.ensures);
            for e in exprs {
                crate::visit::walk_expr(e, &mut |x: &Expr| {
                    if let Some(CallTarget::Function(g)) = sem.call(x.id) {
                        out.insert(g.clone());
                    }
                });
            }
            graph.insert(f.name.name.clone(), out);
        }
    }
    graph
}

/// Whether `e` applies a Viper function (whose termination a contract must then check).
pub fn calls_function(sem: &Semantics, e: &Expr) -> bool {
    let mut found = false;
    crate::visit::walk_expr(e, &mut |x: &Expr| {
        if let Some(CallTarget::Function(_)) = sem.call(x.id) {
            found = true;
        }
    });
    found
}

/// Whether `to` can be reached from `from` by calls.
pub fn reaches(graph: &HashMap<String, HashSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        if let Some(next) = graph.get(&m) {
            for n in next {
                if n == to {
                    return true;
                }
                if seen.insert(n.clone()) {
                    stack.push(n.clone());
                }
            }
        }
    }
    false
}

/// Whether the clauses ask for a termination proof (a measure, not only `*`).
pub fn has_measure(clauses: &[Decreases]) -> bool {
    clauses
        .iter()
        .any(|d| !matches!(d.kind, DecreasesKind::Star))
}
