//! SMT-LIB commands as data. Printed by [`crate::printer`].

use std::sync::Arc;

use crate::sort::Sort;
use crate::symbol::Symbol;
use crate::term::{FunDecl, Term};

/// One SMT-LIB command.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Command {
    SetOption(SmtOption),
    /// `(declare-sort S 0)`.
    DeclareSort(Symbol),
    DeclareFun(FunDecl),
    /// `(define-fun name ((x S) ...) result body)`.
    DefineFun {
        name: Symbol,
        params: Vec<(Symbol, Sort)>,
        result: Sort,
        body: Term,
    },
    /// `(assert t)`, or `(assert (! t :named n))` when named (for unsat cores).
    Assert {
        term: Term,
        name: Option<Symbol>,
    },
    Push(u32),
    Pop(u32),
    CheckSat,
    CheckSatAssuming(Vec<Term>),
    GetModel,
    GetValue(Vec<Term>),
    GetUnsatCore,
    /// `(get-info :keyword)`, keyword without the colon.
    GetInfo(Arc<str>),
    Reset,
    Exit,
    /// One complete command given as SMT-LIB text (e.g. a preamble line); it must answer
    /// `success` like a declaration.
    Raw(Arc<str>),
}

/// `(set-option :name value)`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SmtOption {
    /// Keyword without the leading colon, e.g. `smt.mbqi`.
    pub name: Arc<str>,
    pub value: OptionValue,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum OptionValue {
    Bool(bool),
    Numeral(u64),
    /// A string value, printed in double quotes.
    String(Arc<str>),
    /// A symbol value printed verbatim (e.g. an enumeration value).
    Symbol(Arc<str>),
}

impl SmtOption {
    pub fn new(name: &str, value: OptionValue) -> SmtOption {
        SmtOption {
            name: name.into(),
            value,
        }
    }

    pub fn bool(name: &str, value: bool) -> SmtOption {
        SmtOption::new(name, OptionValue::Bool(value))
    }

    pub fn numeral(name: &str, value: u64) -> SmtOption {
        SmtOption::new(name, OptionValue::Numeral(value))
    }
}

impl Command {
    /// `(assert t)`.
    pub fn assert(term: Term) -> Command {
        Command::Assert { term, name: None }
    }

    /// Whether the solver answers this command with `success` (given `:print-success`).
    pub fn answers_success(&self) -> bool {
        !matches!(
            self,
            Command::CheckSat
                | Command::CheckSatAssuming(_)
                | Command::GetModel
                | Command::GetValue(_)
                | Command::GetUnsatCore
                | Command::GetInfo(_)
        )
    }
}
