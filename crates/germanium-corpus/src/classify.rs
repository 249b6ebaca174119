//! Sorting corpus files by the verification features their programs use, so pass rates can
//! be reported per feature (what the verifier must support next).

use std::collections::HashSet;

use germanium_syntax::ast::{BinaryOp, Block, Expr, ExprKind, ItemKind, Program, Stmt, StmtKind};

/// A feature class; a file belongs to every class whose construct it contains, and to
/// [`FeatureClass::Core`] when it contains none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FeatureClass {
    /// Predicate declarations.
    Predicates,
    /// Functions with bodies.
    FunctionBodies,
    /// Magic wands (`--*`).
    MagicWands,
    /// Quantifiers whose body holds `acc(...)` or a predicate instance.
    QuantifiedPermissions,
    /// None of the above.
    Core,
}

impl FeatureClass {
    pub const ALL: [FeatureClass; 5] = [
        FeatureClass::Predicates,
        FeatureClass::FunctionBodies,
        FeatureClass::MagicWands,
        FeatureClass::QuantifiedPermissions,
        FeatureClass::Core,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FeatureClass::Predicates => "predicates",
            FeatureClass::FunctionBodies => "function bodies",
            FeatureClass::MagicWands => "magic wands",
            FeatureClass::QuantifiedPermissions => "quantified permissions",
            FeatureClass::Core => "core",
        }
    }
}

/// The classes of `program` (never empty).
pub fn classify(program: &Program) -> Vec<FeatureClass> {
    let predicates: HashSet<&str> = program
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Predicate(p) => Some(p.name.name.as_str()),
            _ => None,
        })
        .collect();
    let mut found = Found {
        predicates: &predicates,
        wands: false,
        quantified_permissions: false,
    };
    let mut has_function_bodies = false;
    for item in &program.items {
        match &item.kind {
            ItemKind::Method(m) => {
                for e in m.contract.requires.iter().chain(&m.contract.ensures) {
                    found.expr(e);
                }
                if let Some(body) = &m.body {
                    found.block(body);
                }
            }
            ItemKind::Function(f) => {
                has_function_bodies |= f.body.is_some();
                for e in f
                    .contract
                    .requires
                    .iter()
                    .chain(&f.contract.ensures)
                    .chain(&f.body)
                {
                    found.expr(e);
                }
            }
            ItemKind::Predicate(p) => {
                if let Some(body) = &p.body {
                    found.expr(body);
                }
            }
            _ => {}
        }
    }
    let mut classes = Vec::new();
    if !predicates.is_empty() {
        classes.push(FeatureClass::Predicates);
    }
    if has_function_bodies {
        classes.push(FeatureClass::FunctionBodies);
    }
    if found.wands {
        classes.push(FeatureClass::MagicWands);
    }
    if found.quantified_permissions {
        classes.push(FeatureClass::QuantifiedPermissions);
    }
    if classes.is_empty() {
        classes.push(FeatureClass::Core);
    }
    classes
}

struct Found<'a> {
    predicates: &'a HashSet<&'a str>,
    wands: bool,
    quantified_permissions: bool,
}

impl Found<'_> {
    fn block(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let mut exprs: Vec<&Expr> = Vec::new();
        match &stmt.kind {
            StmtKind::VarDecl(_, init) => exprs.extend(init),
            StmtKind::Assign(targets, value) => {
                exprs.extend(targets);
                exprs.push(value);
            }
            StmtKind::Call(_, args) => exprs.extend(args),
            StmtKind::New(target, _) => exprs.push(target),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                exprs.push(cond);
                self.block(then);
                if let Some(otherwise) = otherwise {
                    self.block(otherwise);
                }
            }
            StmtKind::While {
                cond,
                invariants,
                body,
                ..
            } => {
                exprs.push(cond);
                exprs.extend(invariants);
                self.block(body);
            }
            StmtKind::Label(_, invariants) => exprs.extend(invariants),
            StmtKind::Package(wand, proof) => {
                exprs.push(wand);
                if let Some(proof) = proof {
                    self.block(proof);
                }
            }
            StmtKind::Fold(e)
            | StmtKind::Unfold(e)
            | StmtKind::Apply(e)
            | StmtKind::Inhale(e)
            | StmtKind::Exhale(e)
            | StmtKind::Assert(e)
            | StmtKind::Assume(e)
            | StmtKind::Refute(e) => exprs.push(e),
            StmtKind::Quasihavoc(cond, e) | StmtKind::Quasihavocall(_, cond, e) => {
                exprs.extend(cond);
                exprs.push(e);
            }
            StmtKind::Block(block) => self.block(block),
            // Statements without expressions, and any added later (classification is a
            // statistic, not a check; a missed construct only moves a file to another class).
            _ => {}
        }
        for e in exprs {
            self.expr(e);
        }
    }

    fn expr(&mut self, expr: &Expr) {
        if let ExprKind::Binary(BinaryOp::Wand, _, _) = &expr.kind {
            self.wands = true;
        }
        if let ExprKind::Quantifier { body, .. } = &expr.kind {
            if holds_resource(body, self.predicates) {
                self.quantified_permissions = true;
            }
        }
        for child in children(expr) {
            self.expr(child);
        }
    }
}

/// Whether `expr` mentions `acc(...)` or a predicate instance anywhere.
fn holds_resource(expr: &Expr, predicates: &HashSet<&str>) -> bool {
    match &expr.kind {
        ExprKind::Acc(..) => true,
        ExprKind::Call(name, _) if predicates.contains(name.name.as_str()) => true,
        _ => children(expr)
            .into_iter()
            .any(|child| holds_resource(child, predicates)),
    }
}

/// The direct subexpressions of `expr`.
fn children(expr: &Expr) -> Vec<&Expr> {
    use ExprKind::*;
    match &expr.kind {
        Unary(_, a)
        | FieldAccess(a, _)
        | Ascribed(a, _)
        | Old(_, a)
        | Lhs(a)
        | Perm(a)
        | Length(a)
        | MapDomain(a)
        | MapRange(a)
        | Annotated(_, a) => vec![a],
        Binary(_, a, b)
        | Let(_, a, b)
        | Unfolding(a, b)
        | Applying(a, b)
        | Asserting(a, b)
        | Range(a, b)
        | Index(a, b)
        | InhaleExhale(a, b) => vec![a, b],
        Cond(a, b, c) | Update(a, b, c) => vec![a, b, c],
        Call(_, args) | Collection(_, _, args) => args.iter().collect(),
        Quantifier { triggers, body, .. } => {
            let mut all: Vec<&Expr> = triggers.iter().flat_map(|t| &t.exprs).collect();
            all.push(body);
            all
        }
        Forperm {
            resources, body, ..
        } => {
            let mut all: Vec<&Expr> = resources.iter().collect();
            all.push(body);
            all
        }
        Acc(a, amount) => std::iter::once(&**a).chain(amount.as_deref()).collect(),
        Slice(a, from, to) => std::iter::once(&**a)
            .chain(from.as_deref())
            .chain(to.as_deref())
            .collect(),
        MapLit(_, pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
        // Leaves, and variants added later (see `Found::stmt`).
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::{
        Contract, Function, Ident, Item, Method, NodeId, Predicate, QuantifierKind, TypeExpr,
        TypeExprKind, VarDecl,
    };
    use germanium_syntax::Span;

    fn e(kind: ExprKind) -> Expr {
        Expr {
            id: NodeId(0),
            kind,
            span: Span::default(),
        }
    }

    fn ident(name: &str) -> Ident {
        Ident {
            name: name.into(),
            span: Span::default(),
        }
    }

    fn item(kind: ItemKind) -> Item {
        Item {
            annotations: vec![],
            kind,
            span: Span::default(),
        }
    }

    fn method_requiring(pre: Expr) -> Item {
        item(ItemKind::Method(Method {
            name: ident("m"),
            params: vec![],
            returns: vec![],
            contract: Contract {
                requires: vec![pre],
                ..Default::default()
            },
            body: None,
        }))
    }

    fn forall(body: Expr) -> Expr {
        let ty = TypeExpr {
            kind: TypeExprKind::Ref,
            span: Span::default(),
        };
        e(ExprKind::Quantifier {
            kind: QuantifierKind::Forall,
            vars: vec![VarDecl {
                name: ident("x"),
                ty,
                span: Span::default(),
            }],
            triggers: vec![],
            body: Box::new(body),
        })
    }

    fn x() -> Expr {
        e(ExprKind::Ident(ident("x")))
    }

    #[test]
    fn classes_follow_the_constructs() {
        let plain = Program {
            items: vec![method_requiring(e(ExprKind::BoolLit(true)))],
            ..Default::default()
        };
        assert_eq!(classify(&plain), [FeatureClass::Core]);

        let field = e(ExprKind::FieldAccess(Box::new(x()), ident("f")));
        let qp = Program {
            items: vec![method_requiring(forall(e(ExprKind::Acc(
                Box::new(field),
                None,
            ))))],
            ..Default::default()
        };
        assert_eq!(classify(&qp), [FeatureClass::QuantifiedPermissions]);

        let predicate = item(ItemKind::Predicate(Predicate {
            name: ident("P"),
            params: vec![],
            body: None,
        }));
        let instance = e(ExprKind::Call(ident("P"), vec![x()]));
        let wand = e(ExprKind::Binary(
            BinaryOp::Wand,
            Box::new(instance.clone()),
            Box::new(instance.clone()),
        ));
        let function = item(ItemKind::Function(Function {
            name: ident("f"),
            params: vec![],
            result: TypeExpr {
                kind: TypeExprKind::Int,
                span: Span::default(),
            },
            contract: Contract::default(),
            body: Some(e(ExprKind::IntLit("1".into()))),
        }));
        let everything = Program {
            items: vec![
                predicate,
                function,
                method_requiring(wand),
                method_requiring(forall(instance)),
            ],
            ..Default::default()
        };
        assert_eq!(
            classify(&everything),
            [
                FeatureClass::Predicates,
                FeatureClass::FunctionBodies,
                FeatureClass::MagicWands,
                FeatureClass::QuantifiedPermissions
            ]
        );
    }
}
