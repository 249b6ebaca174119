//! A member's dependency slice as a program of its own: what a remote action verifies, so
//! that the action (and the result a cluster caches for it) depends on exactly what the
//! member's key covers (see [`crate::KeyPlan`]) and an edit elsewhere leaves it alone.
//!
//! The slice keeps the program's order and, of each declaration, the text the key hashes:
//! the member whole; domains and ADTs whole; what the member names, transitively, whole,
//! but methods without their bodies (a caller sees a contract); every other function
//! without its body (its contract is assumed everywhere, its definition only acts where it
//! is applied, and it is applied only where named). Such a function is abstract in the
//! slice, and an abstract function's postcondition is an axiom in both phases, while in the
//! program it is one only once the body was verified: the caller passes
//! [`Slice::bodiless_functions`] as failed when the member is a function (functions are
//! verified before any postcondition of a function with a body is trusted), and the
//! functions that did fail when it is not.

use std::collections::BTreeSet;

use germanium_syntax::{SourceMap, Span};

use crate::keys::text_of;
use crate::KeyPlan;

/// One member's slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    pub member: String,
    /// `method`, `function` or `predicate` (`program` for [`KeyPlan::whole_program`]).
    pub kind: &'static str,
    /// The program text.
    pub text: String,
    /// Functions with a body in the program that have none here.
    pub bodiless_functions: BTreeSet<String>,
    /// Each declaration printed whole: its offset in `text` and its place in the program.
    whole: Vec<(u32, Span)>,
}

impl Slice {
    /// Where the program's `span` is in the slice's text: inside a declaration printed whole,
    /// else `None` (the inverse of [`Slice::original`]).
    pub fn offsets_of(&self, span: Span) -> Option<(u32, u32)> {
        self.whole.iter().find_map(|(at, whole)| {
            let inside =
                span.file == whole.file && span.start >= whole.start && span.end <= whole.end;
            inside.then(|| {
                (
                    at + (span.start - whole.start),
                    at + (span.end - whole.start),
                )
            })
        })
    }

    /// Where the text `start..end` of the slice is in the program: inside a declaration
    /// printed whole, else `None`.
    pub fn original(&self, start: u32, end: u32) -> Option<Span> {
        self.whole.iter().find_map(|(at, span)| {
            let len = span.end - span.start;
            (start >= *at && end <= at + len).then(|| Span {
                file: span.file,
                start: span.start + (start - at),
                end: span.start + (end - at),
            })
        })
    }
}

impl KeyPlan {
    /// How many members the program has (the orders [`KeyPlan::slice`] takes).
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// The whole program as one text, every declaration whole, in the program's order (its
    /// imports' declarations in place of the imports): what a remote batch of several members
    /// verifies, their results then placed in each member's slice by
    /// [`Slice::offsets_of`]. `member` is empty.
    pub fn whole_program(&self, sources: &SourceMap) -> Slice {
        let mut text = String::new();
        let mut whole = Vec::new();
        for decl in &self.declarations {
            if !text.is_empty() {
                text.push('\n');
            }
            whole.push((text.len() as u32, decl.span));
            text.push_str(text_of(sources, decl.span));
        }
        text.push('\n');
        Slice {
            member: String::new(),
            kind: "program",
            text,
            bodiless_functions: BTreeSet::new(),
            whole,
        }
    }

    /// The slice of the member `order` (its place among the program's members, as in
    /// [`crate::MemberKey::order`]), its text read from `sources` (the plan's).
    pub fn slice(&self, order: usize, sources: &SourceMap) -> Option<Slice> {
        let member = self.members.get(order)?;
        let mut text = String::new();
        let mut whole_at = Vec::new();
        let mut bodiless_functions = BTreeSet::new();
        for (d, decl) in self.declarations.iter().enumerate() {
            let own = decl.span == member.span;
            let named = member.closure.contains(&d);
            let printed = if own || decl.everywhere {
                Some(true)
            } else if named {
                // A method the member calls: its contract (a function: whole).
                Some(decl.function.is_some() || decl.body.is_none())
            } else if decl.function.is_some() {
                if decl.body.is_some() {
                    bodiless_functions.extend(decl.function.clone());
                }
                Some(decl.body.is_none())
            } else {
                None
            };
            let Some(in_whole) = printed else {
                continue;
            };
            if !text.is_empty() {
                text.push('\n');
            }
            let whole = text_of(sources, decl.span);
            match decl.body {
                Some((a, b)) if !in_whole => {
                    text.push_str(&whole[..a]);
                    text.push_str(&whole[b..]);
                }
                _ => {
                    whole_at.push((text.len() as u32, decl.span));
                    text.push_str(whole);
                }
            }
        }
        text.push('\n');
        Some(Slice {
            member: member.name.clone(),
            kind: member.kind,
            text,
            bodiless_functions,
            whole: whole_at,
        })
    }
}

#[cfg(test)]
mod tests;
