//! The one place that turns sorts, terms and commands into SMT-LIB 2 text.
//!
//! Everything is printed through `Display`; `to_string()` gives the text sent to the solver
//! and written to logs. Output is on one line per command (the log and the pipe protocol
//! rely on that: responses are matched to commands one by one).
//!
//! Terms are printed with an explicit work stack, so depth is not limited by the thread's
//! stack. A term prints once per occurrence of each subterm, but in an assertion big ground
//! subterms that occur more than once are bound by `let` first ([`crate::sharing`]), so an
//! assertion's text stays about as large as its term graph.

use std::fmt::{self, Display, Formatter, Write};

use crate::command::{Command, OptionValue, SmtOption};
use crate::literal::{IntLit, RealLit};
use crate::sharing::{sharing, Sharing};
use crate::sort::Sort;
use crate::symbol::Symbol;
use crate::term::{Quantifier, QuantifierKind, Term, TermKind};

impl Display for Sort {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Sort::Bool => f.write_str("Bool"),
            Sort::Int => f.write_str("Int"),
            Sort::Real => f.write_str("Real"),
            Sort::Uninterpreted(name) => write!(f, "{name}"),
            Sort::Array(parts) => write!(f, "(Array {} {})", parts.0, parts.1),
            Sort::Raw(text) => f.write_str(text),
        }
    }
}

impl Display for Term {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_term(f, self, None)
    }
}

/// Prints `root`, writing the names of `shared`'s bound subterms in their place (but for
/// `root` itself).
fn write_term(f: &mut Formatter<'_>, root: &Term, shared: Option<&Sharing>) -> fmt::Result {
    // An explicit work stack instead of recursion: deep terms cannot overflow the stack.
    let mut work = Vec::new();
    expand(root, &mut work);
    work.reverse();
    while let Some(piece) = work.pop() {
        match piece {
            Piece::Text(text) => f.write_str(text)?,
            Piece::Owned(text) => f.write_str(&text)?,
            Piece::Symbol(symbol) => write!(f, "{symbol}")?,
            Piece::Term(term) => {
                if let Some(name) = shared.and_then(|s| s.name(term)) {
                    f.write_str(&name)?;
                    continue;
                }
                let mut pieces = Vec::new();
                expand(term, &mut pieces);
                work.extend(pieces.into_iter().rev());
            }
        }
    }
    Ok(())
}

/// Prints an assertion's term with its big shared subterms bound by `let` first (see
/// [`crate::sharing`]): `(let ((%s1 t1) ...) (let (...) term))`, a level per `let`.
fn write_shared_term(f: &mut Formatter<'_>, term: &Term) -> fmt::Result {
    let Some(shared) = sharing(term) else {
        return write_term(f, term, None);
    };
    for level in &shared.levels {
        f.write_str("(let (")?;
        for (i, bound) in level.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            let name = shared.name(bound).unwrap_or_default();
            write!(f, "({name} ")?;
            write_term(f, bound, Some(&shared))?;
            f.write_char(')')?;
        }
        f.write_str(") ")?;
    }
    write_term(f, term, Some(&shared))?;
    for _ in &shared.levels {
        f.write_char(')')?;
    }
    Ok(())
}

/// Pending output of the term printer.
enum Piece<'a> {
    Term(&'a Term),
    Symbol(&'a Symbol),
    Text(&'static str),
    Owned(String),
}

/// The pieces of one node, in output order; children stay unexpanded.
fn expand<'a>(term: &'a Term, out: &mut Vec<Piece<'a>>) {
    match term.kind() {
        TermKind::Bool(b) => out.push(Piece::Text(if *b { "true" } else { "false" })),
        TermKind::Int(value) => out.push(Piece::Owned(int_text(value))),
        TermKind::Real(value) => out.push(Piece::Owned(real_text(value))),
        TermKind::Var(name) => out.push(Piece::Symbol(name)),
        TermKind::App(decl, args) => application(Piece::Symbol(decl.name()), args, out),
        TermKind::Op(op, args) => application(Piece::Text(op.name()), args, out),
        TermKind::Builtin(head, args) => application(Piece::Owned(head.to_string()), args, out),
        TermKind::Quantifier(q) => quantifier(q, out),
        TermKind::Let(bindings, body) => {
            out.push(Piece::Text("(let ("));
            for (i, (name, value)) in bindings.iter().enumerate() {
                out.push(Piece::Text(if i == 0 { "(" } else { " (" }));
                out.push(Piece::Symbol(name));
                out.push(Piece::Text(" "));
                out.push(Piece::Term(value));
                out.push(Piece::Text(")"));
            }
            out.push(Piece::Text(") "));
            out.push(Piece::Term(body));
            out.push(Piece::Text(")"));
        }
    }
}

fn application<'a>(head: Piece<'a>, args: &'a [Term], out: &mut Vec<Piece<'a>>) {
    if args.is_empty() {
        out.push(head);
        return;
    }
    out.push(Piece::Text("("));
    out.push(head);
    for arg in args {
        out.push(Piece::Text(" "));
        out.push(Piece::Term(arg));
    }
    out.push(Piece::Text(")"));
}

fn quantifier<'a>(q: &'a Quantifier, out: &mut Vec<Piece<'a>>) {
    let binder = match q.kind {
        QuantifierKind::Forall => "(forall (",
        QuantifierKind::Exists => "(exists (",
    };
    let vars: Vec<String> = q
        .vars
        .iter()
        .map(|(name, sort)| format!("({name} {sort})"))
        .collect();
    out.push(Piece::Owned(format!("{binder}{}) ", vars.join(" "))));
    let annotated = !q.triggers.is_empty() || q.qid.is_some() || q.weight.is_some();
    if !annotated {
        out.push(Piece::Term(&q.body));
        out.push(Piece::Text(")"));
        return;
    }
    out.push(Piece::Text("(! "));
    out.push(Piece::Term(&q.body));
    for trigger in &q.triggers {
        out.push(Piece::Text(" :pattern ("));
        for (i, term) in trigger.iter().enumerate() {
            if i > 0 {
                out.push(Piece::Text(" "));
            }
            out.push(Piece::Term(term));
        }
        out.push(Piece::Text(")"));
    }
    if let Some(qid) = &q.qid {
        out.push(Piece::Text(" :qid "));
        out.push(Piece::Symbol(qid));
    }
    if let Some(weight) = q.weight {
        out.push(Piece::Owned(format!(" :weight {weight}")));
    }
    out.push(Piece::Text("))"));
}

fn int_text(value: &IntLit) -> String {
    if value.is_negative() {
        format!("(- {})", value.abs_digits())
    } else {
        value.abs_digits()
    }
}

fn real_text(value: &RealLit) -> String {
    let magnitude = if value.is_integer() {
        format!("{}.0", value.numerator().abs_digits())
    } else {
        format!(
            "(/ {}.0 {}.0)",
            value.numerator().abs_digits(),
            value.denominator().abs_digits()
        )
    };
    if value.is_negative() {
        format!("(- {magnitude})")
    } else {
        magnitude
    }
}

impl Display for OptionValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Bool(b) => write!(f, "{b}"),
            OptionValue::Numeral(n) => write!(f, "{n}"),
            OptionValue::String(s) => write_string(f, s),
            OptionValue::Symbol(s) => f.write_str(s),
        }
    }
}

impl Display for SmtOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "(set-option :{} {})", self.name, self.value)
    }
}

/// SMT-LIB string literal: `"` doubled; line breaks escaped so a command stays on one line.
fn write_string(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for ch in s.chars() {
        match ch {
            '"' => f.write_str("\"\"")?,
            '\n' => f.write_str("\\u{a}")?,
            '\r' => f.write_str("\\u{d}")?,
            _ => f.write_char(ch)?,
        }
    }
    f.write_char('"')
}

fn write_sorts(f: &mut Formatter<'_>, sorts: &[Sort]) -> fmt::Result {
    f.write_char('(')?;
    for (i, sort) in sorts.iter().enumerate() {
        if i > 0 {
            f.write_char(' ')?;
        }
        write!(f, "{sort}")?;
    }
    f.write_char(')')
}

fn write_terms(f: &mut Formatter<'_>, terms: &[Term]) -> fmt::Result {
    f.write_char('(')?;
    for (i, term) in terms.iter().enumerate() {
        if i > 0 {
            f.write_char(' ')?;
        }
        write!(f, "{term}")?;
    }
    f.write_char(')')
}

impl Display for Command {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Command::SetOption(option) => write!(f, "{option}"),
            Command::DeclareSort(name) => write!(f, "(declare-sort {name} 0)"),
            Command::DeclareFun(decl) => {
                write!(f, "(declare-fun {} ", decl.name())?;
                write_sorts(f, decl.args())?;
                write!(f, " {})", decl.result())
            }
            Command::DefineFun {
                name,
                params,
                result,
                body,
            } => {
                write!(f, "(define-fun {name} (")?;
                for (i, (param, sort)) in params.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    write!(f, "({param} {sort})")?;
                }
                write!(f, ") {result} {body})")
            }
            Command::Assert { term, name: None } => {
                f.write_str("(assert ")?;
                write_shared_term(f, term)?;
                f.write_char(')')
            }
            Command::Assert {
                term,
                name: Some(name),
            } => {
                f.write_str("(assert (! ")?;
                write_shared_term(f, term)?;
                write!(f, " :named {name}))")
            }
            Command::Push(n) => write!(f, "(push {n})"),
            Command::Pop(n) => write!(f, "(pop {n})"),
            Command::CheckSat => f.write_str("(check-sat)"),
            Command::CheckSatAssuming(terms) => {
                f.write_str("(check-sat-assuming ")?;
                write_terms(f, terms)?;
                f.write_char(')')
            }
            Command::GetModel => f.write_str("(get-model)"),
            Command::GetValue(terms) => {
                f.write_str("(get-value ")?;
                write_terms(f, terms)?;
                f.write_char(')')
            }
            Command::GetUnsatCore => f.write_str("(get-unsat-core)"),
            Command::GetInfo(keyword) => write!(f, "(get-info :{keyword})"),
            Command::Reset => f.write_str("(reset)"),
            Command::Exit => f.write_str("(exit)"),
            // Keep the one-command-per-line discipline even for raw text.
            Command::Raw(text) => f.write_str(&text.replace(['\n', '\r'], " ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::FunDecl;

    fn int_const(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::Int))
    }

    #[track_caller]
    fn expect(actual: impl Display, expected: &str) {
        assert_eq!(actual.to_string(), expected);
    }

    #[test]
    fn sorts() {
        expect(
            Sort::array(Sort::Int, Sort::named("Ref")),
            "(Array Int Ref)",
        );
        expect(Sort::named("Seq[Int]"), "|Seq[Int]|");
        expect(Sort::bit_vec(32), "(_ BitVec 32)");
        expect(Sort::floating_point(8, 24), "(_ FloatingPoint 8 24)");
    }

    #[test]
    fn literals() {
        expect(Term::int(42), "42");
        expect(Term::int(-42), "(- 42)");
        expect(
            Term::int_from_text("-123456789012345678901234567890123456789012").unwrap(),
            "(- 123456789012345678901234567890123456789012)",
        );
        expect(Term::real(1, 2), "(/ 1.0 2.0)");
        expect(Term::real(-3, 1), "(- 3.0)");
        expect(Term::real(-2, 6), "(- (/ 1.0 3.0))");
        expect(Term::real(1, 0), "(/ 1.0 0.0)");
        expect(Term::tt(), "true");
    }

    #[test]
    fn operators() {
        let (x, y) = (int_const("x"), int_const("y"));
        expect(
            Term::add(vec![x.clone(), y.clone(), Term::int(1)]),
            "(+ x y 1)",
        );
        expect(Term::sub(x.clone(), y.clone()), "(- x y)");
        expect(Term::neg(x.clone()), "(- x)");
        expect(Term::int_div(x.clone(), y.clone()), "(div x y)");
        expect(Term::modulo(x.clone(), y.clone()), "(mod x y)");
        expect(Term::le(x.clone(), y.clone()), "(<= x y)");
        expect(
            Term::implies(
                Term::lt(x.clone(), y.clone()),
                Term::gt(x.clone(), y.clone()),
            ),
            "(=> (< x y) (> x y))",
        );
        expect(
            Term::distinct(vec![x.clone(), y.clone(), Term::int(0)]),
            "(distinct x y 0)",
        );
        expect(
            Term::ite(Term::ge(x.clone(), y.clone()), x.clone(), y.clone()),
            "(ite (>= x y) x y)",
        );
        let arr = Term::constant(&FunDecl::constant(
            Symbol::user("a"),
            Sort::array(Sort::Int, Sort::Int),
        ));
        expect(
            Term::select(Term::store(arr.clone(), x.clone(), y.clone()), Term::int(3)),
            "(select (store a x y) 3)",
        );
        expect(
            Term::builtin("bvadd", vec![x.clone(), y], Sort::bit_vec(8)),
            "(bvadd x y)",
        );
        expect(
            Term::builtin("RNE", vec![], Sort::raw("RoundingMode")),
            "RNE",
        );
    }

    #[test]
    fn quantifiers_and_lets() {
        let f = FunDecl::new(Symbol::user("f"), vec![Sort::Int], Sort::Int);
        let i = Symbol::user("i");
        let vi = Term::var(i.clone(), Sort::Int);
        let fi = Term::app(&f, vec![vi.clone()]);
        let plain = Term::forall(
            vec![(i.clone(), Sort::Int)],
            Term::gt(fi.clone(), vi.clone()),
            vec![],
        );
        expect(&plain, "(forall ((i Int)) (> (f i) i))");
        let annotated = Term::quantifier(Quantifier {
            kind: QuantifierKind::Exists,
            vars: vec![(i.clone(), Sort::Int), (Symbol::user("j"), Sort::Bool)],
            body: Term::gt(fi.clone(), vi.clone()),
            triggers: vec![vec![fi.clone()], vec![fi.clone(), vi.clone()]],
            qid: Some(Symbol::user("prog.l12")),
            weight: Some(3),
        });
        expect(&annotated,
            "(exists ((i Int) (j Bool)) (! (> (f i) i) :pattern ((f i)) :pattern ((f i) i) :qid prog.l12 :weight 3))");
        let t = Symbol::user("t");
        let body = Term::add(vec![Term::var(t.clone(), Sort::Int), Term::int(1)]);
        expect(
            Term::let_in(vec![(t, Term::int(5))], body),
            "(let ((t 5)) (+ t 1))",
        );
    }

    #[test]
    fn deep_terms_print_compare_and_drop_without_recursion() {
        let build = || {
            let mut term = int_const("x");
            for i in 0..50_000 {
                term = Term::ite(
                    Term::eq(int_const("x"), Term::int(i)),
                    Term::int(i),
                    Term::add(vec![term, Term::int(1)]),
                );
            }
            term
        };
        // A thread with a small stack shows that no step recurses per level.
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let (a, b) = (build(), build());
                assert!(a == b && !a.same_node(&b));
                let text = a.to_string();
                assert!(text.starts_with("(ite (= x 49999) 49999 (+ (ite (= x 49998)"));
                assert_eq!(text.matches("ite").count(), 50_000);
            });
        worker
            .unwrap()
            .join()
            .expect("deep terms are handled iteratively");
    }

    #[test]
    fn commands() {
        let f = FunDecl::new(
            Symbol::user("f"),
            vec![Sort::Int, Sort::named("Ref")],
            Sort::Bool,
        );
        expect(Command::DeclareFun(f), "(declare-fun f (Int Ref) Bool)");
        expect(
            Command::DeclareFun(FunDecl::constant(Symbol::user("abs"), Sort::Int)),
            "(declare-fun abs% () Int)",
        );
        expect(
            Command::DeclareSort(Symbol::user("Ref")),
            "(declare-sort Ref 0)",
        );
        let x = Symbol::user("x");
        expect(
            Command::DefineFun {
                name: Symbol::user("inc"),
                params: vec![(x.clone(), Sort::Int)],
                result: Sort::Int,
                body: Term::add(vec![Term::var(x, Sort::Int), Term::int(1)]),
            },
            "(define-fun inc ((x Int)) Int (+ x 1))",
        );
        let p = Term::constant(&FunDecl::constant(Symbol::user("p"), Sort::Bool));
        expect(Command::assert(p.clone()), "(assert p)");
        expect(
            Command::Assert {
                term: p.clone(),
                name: Some(Symbol::user("a 1")),
            },
            "(assert (! p :named a%201))",
        );
        expect(Command::Push(1), "(push 1)");
        expect(Command::Pop(2), "(pop 2)");
        expect(Command::CheckSat, "(check-sat)");
        expect(
            Command::CheckSatAssuming(vec![p.clone(), Term::not(p.clone())]),
            "(check-sat-assuming (p (not p)))",
        );
        expect(Command::GetValue(vec![p]), "(get-value (p))");
        expect(Command::GetModel, "(get-model)");
        expect(
            Command::GetInfo("reason-unknown".into()),
            "(get-info :reason-unknown)",
        );
        expect(
            Command::SetOption(SmtOption::bool("smt.mbqi", false)),
            "(set-option :smt.mbqi false)",
        );
        expect(
            Command::SetOption(SmtOption::numeral("timeout", 500)),
            "(set-option :timeout 500)",
        );
        expect(
            Command::SetOption(SmtOption::new("x", OptionValue::String("a\"b\nc".into()))),
            "(set-option :x \"a\"\"b\\u{a}c\")",
        );
        expect(Command::Reset, "(reset)");
        expect(
            Command::Raw("(declare-const\n  q Int)".into()),
            "(declare-const   q Int)",
        );
    }
}
