//! Models and values read back from the solver (`get-model`, `get-value`, `get-unsat-core`).

use std::collections::HashMap;

use crate::literal::{IntLit, RealLit};
use crate::sexpr::SExpr;
use crate::symbol::Symbol;

/// A value the solver reported.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Value {
    Bool(bool),
    Int(IntLit),
    Real(RealLit),
    /// An element of an uninterpreted sort, e.g. `Ref!val!0`.
    Element(Symbol),
    /// Anything else (arrays, functions, bit-vectors, ...), as the solver printed it.
    Other(SExpr),
}

impl Value {
    /// Interprets a value expression as printed by Z3.
    pub fn from_sexpr(expr: &SExpr) -> Value {
        numeric(expr).unwrap_or_else(|| match expr {
            SExpr::Symbol(s) if s == "true" => Value::Bool(true),
            SExpr::Symbol(s) if s == "false" => Value::Bool(false),
            SExpr::Symbol(s) => Value::Element(Symbol::from_solver(s)),
            other => Value::Other(other.clone()),
        })
    }
}

/// Numerals, decimals, `(- v)` and `(/ a b)` as Int or Real values.
fn numeric(expr: &SExpr) -> Option<Value> {
    match expr {
        SExpr::Numeral(digits) => IntLit::parse(digits).map(Value::Int),
        SExpr::Decimal(text) => RealLit::parse_decimal(text).map(Value::Real),
        SExpr::List(items) => match items.as_slice() {
            [minus, inner] if minus.is_symbol("-") => match numeric(inner)? {
                Value::Int(i) => Some(Value::Int(i.negated())),
                Value::Real(r) => Some(Value::Real(r.negated())),
                _ => None,
            },
            [slash, num, den] if slash.is_symbol("/") => {
                let num = as_rational(numeric(num)?)?;
                let den = as_rational(numeric(den)?)?;
                // Z3 prints `(/ a.0 b.0)` with integral parts; anything else is left alone.
                if !num.is_integer() || !den.is_integer() {
                    return None;
                }
                RealLit::new(num.numerator().clone(), den.numerator().clone()).map(Value::Real)
            }
            _ => None,
        },
        _ => None,
    }
}

fn as_rational(value: Value) -> Option<RealLit> {
    match value {
        Value::Int(i) => Some(RealLit::integer(i)),
        Value::Real(r) => Some(r),
        _ => None,
    }
}

/// One `define-fun` of a model.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Definition {
    pub name: Symbol,
    pub params: Vec<(Symbol, SExpr)>,
    pub sort: SExpr,
    pub body: SExpr,
}

impl Definition {
    /// The value of a constant (a definition without parameters).
    pub fn value(&self) -> Option<Value> {
        self.params
            .is_empty()
            .then(|| Value::from_sexpr(&self.body))
    }
}

/// A model: definitions of the declared symbols, and the elements the solver chose for
/// uninterpreted sorts.
#[derive(Clone, Default, Debug)]
pub struct Model {
    definitions: Vec<Definition>,
    index: HashMap<Symbol, usize>,
    /// `(element, sort)` for each `declare-fun` of a universe element.
    pub elements: Vec<(Symbol, SExpr)>,
}

impl Model {
    /// Reads a `get-model` answer: `(def ...)`, optionally `(model def ...)`.
    pub fn from_sexpr(expr: &SExpr) -> Result<Model, String> {
        let items = expr
            .as_list()
            .ok_or_else(|| format!("a model must be a list, got {expr}"))?;
        let items = match items.first() {
            Some(first) if first.is_symbol("model") => &items[1..],
            _ => items,
        };
        let mut model = Model::default();
        for item in items {
            let parts = item.as_list().unwrap_or_default();
            match parts {
                [head, name, params, sort, body] if head.is_symbol("define-fun") => {
                    let name = symbol_of(name)?;
                    let params = params
                        .as_list()
                        .ok_or_else(|| format!("bad parameter list in {item}"))?
                        .iter()
                        .map(|param| match param.as_list() {
                            Some([p, s]) => Ok((symbol_of(p)?, s.clone())),
                            _ => Err(format!("bad parameter {param} in {item}")),
                        })
                        .collect::<Result<Vec<_>, String>>()?;
                    model.index.insert(name.clone(), model.definitions.len());
                    model.definitions.push(Definition {
                        name,
                        params,
                        sort: sort.clone(),
                        body: body.clone(),
                    });
                }
                [head, name, args, sort]
                    if head.is_symbol("declare-fun")
                        && args.as_list().is_some_and(<[_]>::is_empty) =>
                {
                    model.elements.push((symbol_of(name)?, sort.clone()));
                }
                // Cardinality constraints and other annotations carry no definitions.
                _ => {}
            }
        }
        Ok(model)
    }

    pub fn definitions(&self) -> &[Definition] {
        &self.definitions
    }

    pub fn get(&self, name: &Symbol) -> Option<&Definition> {
        self.index.get(name).map(|&i| &self.definitions[i])
    }

    /// The value of a constant, if the model defines it.
    pub fn value(&self, name: &Symbol) -> Option<Value> {
        self.get(name).and_then(Definition::value)
    }

    pub fn len(&self) -> usize {
        self.definitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
    }
}

fn symbol_of(expr: &SExpr) -> Result<Symbol, String> {
    expr.as_symbol()
        .map(Symbol::from_solver)
        .ok_or_else(|| format!("expected a symbol, got {expr}"))
}

/// Reads a `get-value` answer `((t1 v1) (t2 v2) ...)` for `expected` terms.
pub fn values_from_sexpr(expr: &SExpr, expected: usize) -> Result<Vec<Value>, String> {
    let pairs = expr
        .as_list()
        .ok_or_else(|| format!("expected a list of values, got {expr}"))?;
    if pairs.len() != expected {
        return Err(format!("expected {expected} values, got {}", pairs.len()));
    }
    pairs
        .iter()
        .map(|pair| match pair.as_list() {
            Some([_, value]) => Ok(Value::from_sexpr(value)),
            _ => Err(format!("expected (term value), got {pair}")),
        })
        .collect()
}

/// Reads a `get-unsat-core` answer `(n1 n2 ...)`.
pub fn core_from_sexpr(expr: &SExpr) -> Result<Vec<Symbol>, String> {
    expr.as_list()
        .ok_or_else(|| format!("expected a list of names, got {expr}"))?
        .iter()
        .map(symbol_of)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sexpr::parse_one;

    const Z3_MODEL: &str = "(
  ;; universe for S:
  ;;   S!val!0 S!val!1
  ;; -----------
  (declare-fun S!val!0 () S)
  (declare-fun S!val!1 () S)
  (forall ((x S)) (or (= x S!val!0) (= x S!val!1)))
  (define-fun b () S
    S!val!1)
  (define-fun |x@1| () Real
    (/ 1.0 3.0))
  (define-fun x () Int
    (- 5))
  (define-fun p () Bool
    false)
  (define-fun r () Real
    (- (/ 7.0 2.0)))
  (define-fun f ((x!1 Int)) Int
    (ite (= x!1 1) 5
      #unspecified))
)";

    #[test]
    fn reads_a_z3_model() {
        let model = Model::from_sexpr(&parse_one(Z3_MODEL).unwrap()).unwrap();
        let get = |name: &str| model.value(&Symbol::from_solver(name));
        assert_eq!(get("x"), Some(Value::Int(IntLit::Small(-5))));
        assert_eq!(get("p"), Some(Value::Bool(false)));
        assert_eq!(
            get("x@1").map(|v| format!("{v:?}")),
            Some("Real(RealLit { num: Small(1), den: Small(3) })".into())
        );
        match get("r") {
            Some(Value::Real(r)) => assert_eq!(r.to_string(), "-7/2"),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            get("b"),
            Some(Value::Element(Symbol::from_solver("S!val!1")))
        );
        assert_eq!(get("f"), None, "functions have no constant value");
        let f = model.get(&Symbol::from_solver("f")).unwrap();
        assert_eq!(f.params.len(), 1);
        assert_eq!(model.elements.len(), 2);
        assert_eq!(model.len(), 6);
    }

    #[test]
    fn reads_values_and_cores() {
        let answer = parse_one("((x (- 5)) (|x@1| 2.5) ((f 1) 5) (a S!val!0) (bv #x0a))").unwrap();
        let values = values_from_sexpr(&answer, 5).unwrap();
        assert_eq!(values[0], Value::Int(IntLit::Small(-5)));
        assert_eq!(
            values[1],
            Value::Real(RealLit::parse_decimal("2.5").unwrap())
        );
        assert_eq!(values[2], Value::Int(IntLit::Small(5)));
        assert_eq!(values[3], Value::Element(Symbol::from_solver("S!val!0")));
        assert_eq!(values[4], Value::Other(SExpr::BitVec("#x0a".into())));
        assert!(values_from_sexpr(&answer, 4).is_err());
        let core = core_from_sexpr(&parse_one("(|a b| n2)").unwrap()).unwrap();
        assert_eq!(
            core,
            vec![Symbol::from_solver("a b"), Symbol::from_solver("n2")]
        );
    }

    #[test]
    fn odd_shapes_are_errors_or_other() {
        assert!(Model::from_sexpr(&parse_one("sat").unwrap()).is_err());
        assert_eq!(
            Value::from_sexpr(&parse_one("(/ 1.5 2.0)").unwrap()),
            Value::Other(parse_one("(/ 1.5 2.0)").unwrap())
        );
        assert!(matches!(
            Value::from_sexpr(&parse_one("(/ 1.0 0.0)").unwrap()),
            Value::Other(_)
        ));
    }
}
