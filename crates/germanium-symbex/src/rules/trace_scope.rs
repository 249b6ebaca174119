//! The rules' side of the execution log: a step is traced by running it inside
//! [`Verifier::traced`], which opens its record, runs it and closes the record whatever the
//! step returns (so the log's tree follows the rules by construction). With the log off
//! (the default sink) this is one test per step and nothing is built.

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::Term;
use germanium_syntax::Span;

use crate::resources;
use crate::rules::context::Verifier;
use crate::state::{Heap, State};
use crate::trace::{Fact, Failure, Place, Record, StateView, Step};

/// At most this many characters of a construct's source text name its record.
const DETAIL_CHARS: usize = 80;

/// What the log has been given so far by this worker: the numbers of the facts it has
/// seen, and the last state it was given (to give a state only when it changed).
#[derive(Default)]
pub struct TraceMemo {
    facts: HashMap<Term, u64>,
    last: Option<LastState>,
    /// The query of the failing check being reported (for its failure record; set by
    /// `Verifier::check` around the report only).
    pub unproved: Option<Term>,
}

#[derive(PartialEq)]
struct LastState {
    store: HashMap<VarId, Term>,
    heap: Heap,
    facts: usize,
    last_fact: Option<Term>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Runs step `f` as a record of the log: `view` is the state it applies to (from
    /// [`Verifier::view_of`]; `None`: the state given last), `detail` what it is about
    /// (built only when a log is on; empty: the construct's source text).
    pub fn traced<T>(
        &mut self,
        step: Step,
        span: Span,
        view: Option<StateView>,
        detail: impl FnOnce() -> String,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        if !self.trace.enabled() {
            return f(self);
        }
        let mut detail = detail();
        if detail.is_empty() {
            detail = self.source_text(span);
        }
        let place = self.place(span);
        self.trace.open(&Record {
            step,
            span,
            place,
            detail: &detail,
            depth: self.decider.depth(),
            state: view.as_ref(),
        });
        let r = f(self);
        self.trace.close();
        r
    }

    /// Gives the log a failed check (with the query left unproved, if one was).
    pub(crate) fn trace_failure(&mut self, id: &str, message: &str, span: Span) {
        if !self.trace.enabled() {
            return;
        }
        let query = self.member.trace.unproved.take().map(|q| q.to_string());
        let place = self.place(span);
        self.trace.failure(&Failure {
            id,
            message,
            place,
            query,
        });
    }

    /// `st` with `heap` as text for the log, or `None` when no log is on or it is the
    /// state the log was given last.
    pub fn view_of(&mut self, st: &State, heap: &Heap) -> Option<StateView> {
        if !self.trace.enabled() {
            return None;
        }
        let facts: Vec<&Term> = self.decider.path_facts().collect();
        let now = LastState {
            store: st.store.clone(),
            heap: heap.clone(),
            facts: facts.len(),
            last_fact: facts.last().map(|f| (*f).clone()),
        };
        if self.member.trace.last.as_ref() == Some(&now) {
            return None;
        }
        self.member.trace.last = Some(now);
        let mut vars: Vec<(&VarId, &Term)> = st.store.iter().collect();
        vars.sort_by_key(|(v, _)| **v);
        let store = vars
            .into_iter()
            .map(|(v, t)| (self.env.sem.var(*v).name.clone(), t.to_string()))
            .collect();
        let memo = &mut self.member.trace.facts;
        let path = facts
            .into_iter()
            .map(|f| {
                let next = memo.len() as u64;
                let mut text = None;
                let number = *memo.entry(f.clone()).or_insert_with(|| {
                    text = Some(f.to_string());
                    next
                });
                Fact { number, text }
            })
            .collect();
        Some(StateView {
            store,
            heap: resources::chunk_views(heap),
            path,
        })
    }

    fn place(&self, span: Span) -> Option<Place> {
        if span == Span::default() {
            return None;
        }
        let sources = self.env.sources;
        let (start, end) = (sources.start(span), sources.end(span));
        Some(Place {
            file: sources.get(span.file).path.display().to_string(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        })
    }

    /// The source text of `span`, on one line and shortened.
    fn source_text(&self, span: Span) -> String {
        if span == Span::default() {
            return String::new();
        }
        let text = &self.env.sources.get(span.file).text;
        let piece = text
            .get(span.start as usize..span.end as usize)
            .unwrap_or_default();
        let mut out = String::new();
        for word in piece.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
            if out.chars().count() > DETAIL_CHARS {
                let cut: String = out.chars().take(DETAIL_CHARS).collect();
                return cut + " …";
            }
        }
        out
    }
}
