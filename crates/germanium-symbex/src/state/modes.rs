//! The modes of the rules: how evaluate, produce, consume and execute behave in a scope
//! (checking or trusting, scaling amounts, reading leniently, ...). Plain data; the rules
//! set modes for a scope with `Verifier::with_modes`, which restores them when the scope
//! ends however it ends, so no early return can leave a mode on.

use germanium_smt::Term;

use super::permission::Permission;

#[derive(Clone, Debug, PartialEq)]
pub struct Modes {
    /// Evaluation checks well-definedness and consumption checks permissions (off for
    /// axioms built from verified contracts and for bodies of predicates being unfolded).
    pub checking: bool,
    /// Amounts of permission in the assertion being produced or consumed are multiplied by
    /// this (the amount of a predicate instance being folded or unfolded).
    pub perm_scale: Option<Permission>,
    /// A function's definition is being translated into an axiom: applications use the
    /// limited versions and nothing is checked.
    pub in_axiom: bool,
    /// Consumption needs only some positive amount of each permission (Viper's semantics of
    /// function preconditions and of unfoldings inside functions).
    pub positive_only: bool,
    /// A function's postcondition is being assumed (a postcondition mentioning the function
    /// itself must not be unfolded again).
    pub in_function_post: bool,
    /// Field reads without permission yield unconstrained values instead of errors (when
    /// well-definedness is checked separately, as for loop invariants).
    pub lenient_reads: bool,
    /// Consumption assumes instead of checking (impure `assume`).
    pub assuming: bool,
    /// Production takes the exhale part `b` of `[a, b]` (to check contracts'
    /// well-formedness in both readings).
    pub exhale_parts: bool,
    /// Evaluation without checks of expressions known to be well-defined (a callee's
    /// verified postcondition): function postconditions are still assumed.
    pub trusted: bool,
    /// An unfold in a checked context produces a predicate body: its amounts must still not
    /// be negative (a predicate need not be well-formed).
    pub body_amounts_checked: bool,
    /// The function whose body or contract is being verified.
    pub current_function: Option<String>,
    /// The value of `result` in a function's postcondition.
    pub result: Option<Term>,
    /// A wand is being packaged and this is a dry run of a step: what the step needs and
    /// the left-hand side's states lack is taken from the state around the package (see
    /// `rules::package`), and reads see that state too.
    pub extracting: bool,
    /// A wand's right-hand side is checked to be self-framing: what `old[lhs](..)` reads is
    /// not checked then (the left-hand side's state is known where the wand is packaged or
    /// applied, and the read is checked there).
    pub wand_rhs_check: bool,
    /// A wand's right-hand side is evaluated (checked, consumed by a package, produced by an
    /// apply): the left-hand side's state (`old[lhs]`) may frame the receivers of the
    /// locations it names (`acc(x.f.g)` with `x.f` held by the left-hand side only). Its
    /// facts about values (`x.f == 0`, amounts) must still be framed by the right-hand side.
    pub wand_rhs: bool,
    /// A receiver (of a field read or an accessibility predicate) is being evaluated.
    pub reading_receiver: bool,
    /// A trigger's terms are being made: a read held through quantified chunks is the value
    /// map at the location of the chunk this picks (newest first; a pattern cannot hold the
    /// choice among chunks).
    pub trigger_choice: Option<usize>,
    /// What `rd` means here: the amount chosen for the callee whose contract is being
    /// consumed or produced, or for the loop whose invariant or body this is; `None`: the
    /// method's own.
    pub read_amount: Option<Term>,
    /// Token amounts chosen by the amount being taken (`rd_token_fresh(tk)`): bounded as
    /// fresh amounts are (see `rules::read_permissions`).
    pub fresh_tokens: Vec<Term>,
}

impl Default for Modes {
    fn default() -> Modes {
        Modes {
            checking: true,
            perm_scale: None,
            in_axiom: false,
            positive_only: false,
            in_function_post: false,
            lenient_reads: false,
            assuming: false,
            exhale_parts: false,
            trusted: false,
            body_amounts_checked: false,
            current_function: None,
            result: None,
            extracting: false,
            wand_rhs_check: false,
            wand_rhs: false,
            reading_receiver: false,
            trigger_choice: None,
            read_amount: None,
            fresh_tokens: Vec::new(),
        }
    }
}
