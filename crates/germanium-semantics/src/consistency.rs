//! Viper's consistency rules, checked on well-typed programs: where wildcards, `old`,
//! labels, permission introspection and impure assertions may occur, trigger coverage,
//! proof-script restrictions, recursion in specifications and backend types.

// Each match arm states one rule and the walk then goes on into the children; folding a
// rule's `if` into the arm's guard would let other arms take the node.
#![allow(clippy::collapsible_match)]

use std::collections::{HashMap, HashSet};

use germanium_syntax::ast::*;
use germanium_syntax::{Diagnostic, Span};

use crate::semantics::{CallTarget, Semantics, VarId};
use crate::types::Type;
use crate::visit;

/// Where an expression occurs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    MethodPre,
    MethodPost,
    /// A statement or invariant in a method body.
    MethodBody,
    FunctionSpec,
    FunctionBody,
    PredicateBody,
    Axiom,
    Decreases,
}

struct Ctx<'a> {
    place: Place,
    /// In `inhale`/`assume`, where `unfolding` may have an impure body.
    inhaled: bool,
    labels: Option<&'a HashSet<String>>,
    /// Inside a magic wand or a package proof script (`old[lhs]` and `lhs` allowed).
    in_wand: bool,
}

pub(crate) struct Consistency<'a> {
    sem: &'a Semantics,
    pub errors: Vec<Diagnostic>,
}

const BACKEND_KEYS: [&str; 2] = ["SMTLIB", "Boogie"];

impl<'a> Consistency<'a> {
    pub fn new(sem: &'a Semantics) -> Self {
        Consistency {
            sem,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(Diagnostic::consistency(span, msg));
    }

    fn impure(&self, e: &Expr) -> bool {
        matches!(self.sem.type_of(e.id), Some(Type::Impure | Type::Wand))
    }

    pub fn check_program(&mut self, program: &Program) {
        self.recursion_in_specs(program);
        for item in &program.items {
            match &item.kind {
                ItemKind::Domain(d) => {
                    if let Some(keys) = &d.interpretation {
                        if keys
                            .iter()
                            .any(|(k, _)| !BACKEND_KEYS.contains(&k.name.as_str()))
                        {
                            self.error(item.span, "backend type interpretations may only use the keys SMTLIB and Boogie");
                        }
                    }
                    for a in &d.axioms {
                        self.expr(
                            &a.body,
                            &Ctx {
                                inhaled: false,
                                place: Place::Axiom,
                                labels: None,
                                in_wand: false,
                            },
                        );
                    }
                }
                ItemKind::Adt(a) => {
                    if a.constructors.is_empty() {
                        self.error(item.span, "an ADT needs at least one constructor");
                    }
                }
                ItemKind::Function(f) => {
                    let spec = Ctx {
                        inhaled: false,
                        place: Place::FunctionSpec,
                        labels: None,
                        in_wand: false,
                    };
                    for e in f.contract.requires.iter().chain(&f.contract.ensures) {
                        self.expr(e, &spec);
                    }
                    self.decreases(&f.contract.decreases);
                    if let Some(b) = &f.body {
                        self.expr(
                            b,
                            &Ctx {
                                inhaled: false,
                                place: Place::FunctionBody,
                                labels: None,
                                in_wand: false,
                            },
                        );
                    }
                }
                ItemKind::Predicate(p) => {
                    if let Some(b) = &p.body {
                        self.expr(
                            b,
                            &Ctx {
                                inhaled: false,
                                place: Place::PredicateBody,
                                labels: None,
                                in_wand: false,
                            },
                        );
                    }
                }
                ItemKind::Method(m) => self.method(m),
                _ => {}
            }
        }
    }

    fn decreases(&mut self, ds: &[Decreases]) {
        self.decreases_order(ds);
        let ctx = Ctx {
            inhaled: false,
            place: Place::Decreases,
            labels: None,
            in_wand: false,
        };
        for e in visit::decreases_exprs(ds) {
            self.expr(e, &ctx);
            if let Some(span) = surviving_inhale_exhale(e) {
                self.error(
                    span,
                    "inhale-exhale expressions are only allowed in specifications",
                );
            }
        }
    }

    /// Only the last decreases clause may be unconditional.
    fn decreases_order(&mut self, ds: &[Decreases]) {
        for d in ds.iter().take(ds.len().saturating_sub(1)) {
            if d.condition.is_none() {
                self.error(
                    d.span,
                    "only the last decreases clause may be unconditional",
                );
            }
        }
    }

    fn method(&mut self, m: &Method) {
        let mut labels = HashSet::new();
        if let Some(b) = &m.body {
            let mut dups = Vec::new();
            visit::walk_stmts(b, &mut |s| {
                if let StmtKind::Label(l, _) = &s.kind {
                    if !labels.insert(l.name.clone()) {
                        dups.push(l.span);
                    }
                }
            });
            for span in dups {
                self.error(span, "duplicate label");
            }
        }
        let returns: HashSet<VarId> = self
            .sem
            .methods
            .get(&m.name.name)
            .map(|i| i.returns.iter().copied().collect())
            .unwrap_or_default();
        for pre in &m.contract.requires {
            self.expr(
                pre,
                &Ctx {
                    inhaled: false,
                    place: Place::MethodPre,
                    labels: Some(&labels),
                    in_wand: false,
                },
            );
            let mut uses_return = None;
            visit::walk_expr(pre, &mut |x| {
                if let ExprKind::Ident(_) = x.kind {
                    if self
                        .sem
                        .idents
                        .get(x.id.0 as usize)
                        .copied()
                        .flatten()
                        .is_some_and(|v| returns.contains(&v))
                    {
                        uses_return.get_or_insert(x.span);
                    }
                }
            });
            if let Some(span) = uses_return {
                self.error(span, "return variables may not be used in preconditions");
            }
        }
        for post in &m.contract.ensures {
            self.expr(
                post,
                &Ctx {
                    inhaled: false,
                    place: Place::MethodPost,
                    labels: Some(&labels),
                    in_wand: false,
                },
            );
        }
        self.decreases(&m.contract.decreases);
        if let Some(b) = &m.body {
            self.block(b, &labels, None);
            self.control_flow(b);
        }
    }

    /// A body with `goto`s must have a reducible control-flow graph (every cycle entered
    /// through one head, whose label carries the loop's invariant), as Viper's loop detection
    /// requires of every method it verifies.
    fn control_flow(&mut self, body: &Block) {
        if !germanium_cfg::has_jumps(body) {
            return;
        }
        for problem in germanium_cfg::BodyCfg::of(body).problems() {
            if let germanium_cfg::Problem::Irreducible { at } = problem {
                self.error(
                    *at,
                    "the control flow of this method is not reducible: this jump enters a loop \
                     other than at its head, the one place an invariant could be checked",
                );
            }
        }
    }

    /// `script` holds the variables declared in the innermost enclosing package proof script.
    fn block(&mut self, b: &Block, labels: &HashSet<String>, script: Option<&mut HashSet<VarId>>) {
        let mut script = script;
        for s in &b.stmts {
            self.stmt(s, labels, script.as_deref_mut());
        }
    }

    fn stmt(
        &mut self,
        s: &Stmt,
        labels: &HashSet<String>,
        mut script: Option<&mut HashSet<VarId>>,
    ) {
        let in_script = script.is_some();
        let inhaled = matches!(s.kind, StmtKind::Inhale(_) | StmtKind::Assume(_));
        let ctx = Ctx {
            inhaled,
            place: Place::MethodBody,
            labels: Some(labels),
            in_wand: in_script,
        };
        for e in visit::stmt_exprs(s) {
            self.expr(e, &ctx);
        }
        match &s.kind {
            StmtKind::VarDecl(vars, _) => {
                if let Some(set) = script.as_deref_mut() {
                    for i in 0..vars.len() {
                        if let Some(v) = self.sem.binders.get(&(s.id, i)) {
                            set.insert(*v);
                        }
                    }
                }
            }
            StmtKind::Assign(targets, _) => {
                let mut seen = HashSet::new();
                for t in targets {
                    match &t.kind {
                        ExprKind::Ident(id) => {
                            let var = self.sem.idents.get(t.id.0 as usize).copied().flatten();
                            if let Some(v) = var {
                                if let Some(set) = script.as_deref() {
                                    if !set.contains(&v) {
                                        self.error(s.span, "proof scripts may only assign to their own local variables");
                                    }
                                }
                                if !seen.insert(v) {
                                    self.error(
                                        s.span,
                                        format!("duplicate assignment target {}", id.name),
                                    );
                                }
                            }
                        }
                        ExprKind::FieldAccess(..) if in_script => {
                            self.error(
                                s.span,
                                "field assignments are not allowed in proof scripts",
                            );
                        }
                        _ => {}
                    }
                }
            }
            StmtKind::New(..) if in_script => {
                self.error(s.span, "this statement is not allowed in proof scripts");
            }
            StmtKind::Goto(l) => {
                if !labels.contains(&l.name) {
                    self.error(s.span, format!("undefined label {}", l.name));
                }
                if in_script {
                    self.error(s.span, "goto is not allowed in proof scripts");
                }
            }
            StmtKind::If {
                then, otherwise, ..
            } => {
                self.block(then, labels, script.as_deref_mut());
                if let Some(o) = otherwise {
                    self.block(o, labels, script.as_deref_mut());
                }
            }
            StmtKind::While {
                body, decreases, ..
            } => {
                if in_script {
                    self.error(s.span, "loops are not allowed in proof scripts");
                }
                self.decreases_order(decreases);
                self.block(body, labels, script.as_deref_mut());
            }
            StmtKind::Block(b) => self.block(b, labels, script),
            StmtKind::Package(_, Some(b)) => {
                let mut own = HashSet::new();
                self.block(b, labels, Some(&mut own));
            }
            _ => {}
        }
    }

    /// All expression-level rules.
    fn expr(&mut self, e: &Expr, ctx: &Ctx) {
        match &e.kind {
            ExprKind::Wildcard => self.error(
                e.span,
                "wildcard may only be used as the permission amount of acc",
            ),
            ExprKind::ReadPerm(_) => self.error(
                e.span,
                "abstract read permissions may only be used as the permission amount of acc",
            ),
            ExprKind::Acc(loc, amount) => {
                self.expr(loc, ctx);
                if let Some(a) = amount {
                    match &a.kind {
                        ExprKind::Wildcard => {}
                        _ if has_read_perm(a) => self.read_amount(a, ctx, true),
                        // `c ? wildcard : none` is still a wildcard amount.
                        ExprKind::Cond(c, x, y)
                            if [x, y].iter().all(|z| {
                                matches!(z.kind, ExprKind::Wildcard | ExprKind::NoPerm)
                            }) =>
                        {
                            self.expr(c, ctx)
                        }
                        _ => self.expr(a, ctx),
                    }
                }
                return;
            }
            ExprKind::Quantifier {
                kind,
                vars,
                triggers,
                body,
            } => {
                let names: Vec<String> = vars.iter().map(|v| v.name.name.clone()).collect();
                for t in triggers {
                    let covered = names.iter().all(|n| {
                        t.exprs
                            .iter()
                            .any(|x| crate::check_expr::mentions_any(x, std::slice::from_ref(n)))
                    });
                    if t.exprs.is_empty() || !covered {
                        self.error(e.span, "a trigger must mention all quantified variables");
                    }
                }
                if *kind == QuantifierKind::Exists && self.impure(body) {
                    self.error(e.span, "existential quantifiers must be pure");
                }
            }
            ExprKind::Binary(BinaryOp::Or | BinaryOp::Iff, l, r) => {
                if self.impure(l) || self.impure(r) {
                    self.error(
                        e.span,
                        "impure assertions may not occur under a disjunction or equivalence",
                    );
                }
            }
            ExprKind::Unary(UnaryOp::Not, a) => {
                if self.impure(a) {
                    self.error(e.span, "impure assertions may not be negated");
                }
            }
            ExprKind::Let(_, v, _) => {
                if self.impure(v) {
                    self.error(e.span, "let may only bind pure expressions");
                }
            }
            ExprKind::Unfolding(_, body) | ExprKind::Applying(_, body) => {
                if self.impure(body) && (ctx.in_wand || !ctx.inhaled) {
                    self.error(e.span, "the body of unfolding and applying must be pure");
                }
            }
            ExprKind::Binary(BinaryOp::Wand, l, r) => {
                // `old[lhs]` refers to the state of the left side: only the right side may use it.
                let left = Ctx {
                    inhaled: false,
                    place: ctx.place,
                    labels: ctx.labels,
                    in_wand: false,
                };
                let right = Ctx {
                    inhaled: false,
                    place: ctx.place,
                    labels: ctx.labels,
                    in_wand: true,
                };
                self.expr(l, &left);
                self.expr(r, &right);
                return;
            }
            ExprKind::Old(label, _) => self.old(e, label.as_ref(), ctx),
            ExprKind::Lhs(_) => {
                if !ctx.in_wand {
                    self.error(e.span, "lhs may only be used in magic wands");
                }
            }
            ExprKind::Perm(_) | ExprKind::Forperm { .. } => {
                if matches!(
                    ctx.place,
                    Place::FunctionBody | Place::PredicateBody | Place::Axiom
                ) {
                    self.error(e.span, "permission introspection is not allowed here");
                }
            }
            ExprKind::InhaleExhale(..) => {
                // In decreases clauses, see `surviving_inhale_exhale`.
                if matches!(ctx.place, Place::FunctionBody | Place::Axiom) {
                    self.error(
                        e.span,
                        "inhale-exhale expressions are only allowed in specifications",
                    );
                }
            }
            ExprKind::FieldAccess(..) | ExprKind::Asserting(..) => {
                let adt = matches!(
                    self.sem.field_access(e.id),
                    Some(
                        crate::semantics::FieldTarget::AdtDestructor { .. }
                            | crate::semantics::FieldTarget::AdtDiscriminator { .. }
                    )
                );
                if ctx.place == Place::Axiom && !adt {
                    self.error(e.span, "axioms must not depend on the heap");
                }
            }
            _ => {}
        }
        if ctx.place == Place::Axiom && matches!(e.kind, ExprKind::Unfolding(..)) {
            self.error(e.span, "axioms must not depend on the heap");
        }
        for c in visit::children(e) {
            self.expr(c, ctx);
        }
    }

    /// An amount with abstract read permissions (seed 003): linear in them (sums,
    /// differences, and products and quotients with amounts free of them), with `?:` only
    /// at its top.
    fn read_amount(&mut self, a: &Expr, ctx: &Ctx, top: bool) {
        const LINEAR: &str = "abstract read permissions may only be combined linearly \
             (+, -, and * or / by amounts without read permissions)";
        match &a.kind {
            ExprKind::ReadPerm(_) => {
                for c in visit::children(a) {
                    self.expr(c, ctx);
                }
            }
            ExprKind::Binary(BinaryOp::Add | BinaryOp::Sub, l, r) => {
                self.read_amount(l, ctx, false);
                self.read_amount(r, ctx, false);
            }
            ExprKind::Unary(UnaryOp::Neg, x) => self.read_amount(x, ctx, false),
            ExprKind::Binary(BinaryOp::Mul, l, r) => match (has_read_perm(l), has_read_perm(r)) {
                (true, true) => self.error(a.span, LINEAR),
                (true, false) => {
                    self.read_amount(l, ctx, false);
                    self.expr(r, ctx);
                }
                _ => {
                    self.expr(l, ctx);
                    self.read_amount(r, ctx, false);
                }
            },
            ExprKind::Binary(BinaryOp::Div, l, r) if !has_read_perm(r) => {
                self.read_amount(l, ctx, false);
                self.expr(r, ctx);
            }
            ExprKind::Cond(c, x, y) if top && !has_read_perm(c) => {
                self.expr(c, ctx);
                self.read_amount(x, ctx, true);
                self.read_amount(y, ctx, true);
            }
            ExprKind::Cond(..) if has_read_perm(a) => self.error(
                a.span,
                "a conditional amount with abstract read permissions must be the whole amount, \
                 with a condition free of them",
            ),
            _ if has_read_perm(a) => self.error(a.span, LINEAR),
            _ => self.expr(a, ctx),
        }
    }

    fn old(&mut self, e: &Expr, label: Option<&Ident>, ctx: &Ctx) {
        match ctx.place {
            Place::MethodBody | Place::MethodPost | Place::MethodPre => {}
            _ => {
                self.error(e.span, "old expressions are only allowed in methods");
                return;
            }
        }
        let Some(l) = label else {
            if ctx.place == Place::MethodPre {
                self.error(e.span, "old expressions are not allowed in preconditions");
            }
            return;
        };
        if l.name == "lhs" {
            if !ctx.in_wand {
                self.error(e.span, "old[lhs] may only be used in magic wands");
            }
            return;
        }
        if ctx.place != Place::MethodBody {
            self.error(
                e.span,
                "labelled old expressions are not allowed in contracts",
            );
            return;
        }
        if !ctx.labels.is_some_and(|ls| ls.contains(&l.name)) {
            self.error(e.span, format!("undefined label {}", l.name));
        }
    }

    /// Functions whose preconditions or decreases clauses call a function that leads back to
    /// them (through any calls), and postconditions of functions without a decreases clause
    /// that lead back to the function through postconditions.
    fn recursion_in_specs(&mut self, program: &Program) {
        let mut all_calls: HashMap<&str, Vec<String>> = HashMap::new();
        // Calls in bodies only: Viper's termination plugin rejects a postcondition of a
        // function without decreases clause that calls a function of its body-recursion cycle.
        let mut body_calls: HashMap<&str, Vec<String>> = HashMap::new();
        let mut functions = Vec::new();
        for item in &program.items {
            if let ItemKind::Function(f) = &item.kind {
                let mut spec = Vec::new();
                for e in f
                    .contract
                    .requires
                    .iter()
                    .chain(visit::decreases_exprs(&f.contract.decreases))
                {
                    self.called_functions(e, &mut spec);
                }
                let mut posts = Vec::new();
                for e in &f.contract.ensures {
                    self.called_functions(e, &mut posts);
                }
                let mut all = spec.clone();
                all.extend(posts.iter().cloned());
                let mut body = Vec::new();
                if let Some(b) = &f.body {
                    self.called_functions(b, &mut body);
                }
                all.extend(body.iter().cloned());
                all_calls.insert(&f.name.name, all);
                body_calls.insert(&f.name.name, body);
                functions.push((f, item.span, spec));
            }
        }
        for (f, span, spec) in functions {
            let name = f.name.name.as_str();
            if spec
                .iter()
                .any(|g| g == name || reaches(&all_calls, g, name))
            {
                self.error(
                    span,
                    "the function's specification calls the function recursively",
                );
            }
            if !f.contract.decreases.is_empty() {
                continue;
            }
            for post in &f.contract.ensures {
                let mut called = Vec::new();
                self.called_functions(post, &mut called);
                if called.iter().any(|g| g == name) {
                    self.error(
                        post.span,
                        "a function's postcondition may not call the function itself",
                    );
                } else if let Some(g) = called
                    .iter()
                    .find(|g| reaches(&body_calls, name, g) && reaches(&body_calls, g, name))
                {
                    self.error(
                        post.span,
                        format!("the postcondition calls the mutually recursive function {g}: add a decreases clause to prove well-foundedness"),
                    );
                }
            }
        }
    }

    fn called_functions(&self, e: &Expr, out: &mut Vec<String>) {
        visit::walk_expr(e, &mut |x| {
            if let Some(CallTarget::Function(f)) = self.sem.call(x.id) {
                out.push(f.clone());
            }
        });
    }
}

/// Whether `target` is reachable from `start` in the call graph.
fn reaches(graph: &HashMap<&str, Vec<String>>, start: &str, target: &str) -> bool {
    let mut seen = HashSet::new();
    let mut stack: Vec<&str> = graph
        .get(start)
        .map(|v| v.iter().map(String::as_str).collect())
        .unwrap_or_default();
    while let Some(n) = stack.pop() {
        if n == target {
            return true;
        }
        if seen.insert(n) {
            if let Some(next) = graph.get(n) {
                stack.extend(next.iter().map(String::as_str));
            }
        }
    }
    false
}

/// The first inhale-exhale expression in a measure or its condition that Viper's
/// simplification of conditionals keeps (`true ? a : b` is `a`, `false ? a : b` is `b`,
/// `c ? a : a` is `a`): Viper simplifies the termination checks it generates and rejects
/// the inhale-exhale expressions left in them.
/// Whether `e` mentions an abstract read permission.
fn has_read_perm(e: &Expr) -> bool {
    let mut found = false;
    visit::walk_expr(e, &mut |x| found |= matches!(x.kind, ExprKind::ReadPerm(_)));
    found
}

fn surviving_inhale_exhale(e: &Expr) -> Option<Span> {
    match &e.kind {
        ExprKind::InhaleExhale(..) => Some(e.span),
        ExprKind::Cond(c, t, f) => match &c.kind {
            ExprKind::BoolLit(true) => surviving_inhale_exhale(t),
            ExprKind::BoolLit(false) => surviving_inhale_exhale(f),
            _ if same_shape(t, f) => surviving_inhale_exhale(t),
            _ => [c, t, f]
                .into_iter()
                .find_map(|x| surviving_inhale_exhale(x)),
        },
        _ => visit::children(e)
            .into_iter()
            .find_map(surviving_inhale_exhale),
    }
}

/// Whether two expressions are written alike (positions and node ids aside).
fn same_shape(a: &Expr, b: &Expr) -> bool {
    shape(a) == shape(b)
}

/// The debug form of an expression without its positions and node ids.
fn shape(e: &Expr) -> String {
    let text = format!("{e:?}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    loop {
        let next = [("span: Span {", '}'), ("id: NodeId(", ')')]
            .iter()
            .filter_map(|(open, close)| rest.find(open).map(|i| (i, *open, *close)))
            .min_by_key(|(i, _, _)| *i);
        let Some((i, open, close)) = next else { break };
        out.push_str(&rest[..i]);
        let after = &rest[i + open.len()..];
        rest = match after.find(close) {
            Some(j) => &after[j + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}
