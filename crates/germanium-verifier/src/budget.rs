//! The budget of one solver query, and how the user's `--timeout` maps to it.
//!
//! A query is bounded first by Z3's resource limit (`:rlimit`), which counts solver work,
//! not seconds: the same query gets the same answer however busy the machine is. Two
//! last-resort guards stop what the resource count does not see: a memory limit (a
//! matching loop can fill gigabytes while counting few resource units) and a wall clock far
//! above the time the resource budget normally takes.

use std::time::Duration;

/// Resource units granted per second of `--timeout`. Z3 did about 10.9 million units per
/// second of solver time on the answered queries of Viper's test suite (2-core machine,
/// `bench/calibrate-budget`), so a budget is "about that many seconds of solver work".
pub const RESOURCES_PER_SECOND: u64 = 10_000_000;

/// The wall clock allows this many times the `--timeout`, so that the resource budget runs
/// out first for every query, also on a machine running two other CPU-bound processes (a
/// query stopped by the clock gives no verdict). Z3 counts its units at very different
/// speeds: 10 million per second on average, 3.5 million in the slowest query of the pass
/// list (`bsearch.vpr`, 6.9 s alone), and 1.4 million in the transitive-closure programs of
/// `graphs/`, whose sessions grow to 800 MB (e-matching over that many terms and millions
/// of short-lived clauses per query cost far more time per unit): 35 s alone for a full
/// budget at `--timeout 5`, over 50 s on a loaded machine, where a factor of 10 let the
/// clock end them. At 30 the clock stays four times above that.
pub const WALL_CLOCK_FACTOR: u32 = 30;

/// A feasibility check gets this fraction of a query's budget (see
/// [`Budget::check_limits`]): 2.5 million units at the default `--timeout`, a quarter of a
/// second of solver work.
pub const CHECK_SHARE: u64 = 20;

/// Z3's memory limit per process, in megabytes. The largest answered query of the test
/// suite needs 24 MB; a matching loop reaches this within seconds.
pub const MEMORY_LIMIT_MB: u64 = 1024;

/// The limits of every query of one verification run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The user's `--timeout`, from which the others are derived.
    pub timeout: Duration,
    /// Z3 resource units per query.
    pub resources: u64,
    /// The last-resort wall-clock limit per query.
    pub wall_clock: Duration,
}

impl Budget {
    pub fn from_timeout(timeout: Duration) -> Budget {
        let resources = (timeout.as_secs_f64() * RESOURCES_PER_SECOND as f64) as u64;
        Budget {
            timeout,
            resources: resources.max(1),
            wall_clock: timeout * WALL_CLOCK_FACTOR,
        }
    }

    pub fn limits(&self) -> germanium_smt::QueryLimits {
        germanium_smt::QueryLimits {
            timeout: None,
            rlimit: Some(self.resources),
            wall_clock: Some(self.wall_clock),
            deepen: false,
        }
    }

    /// [`Budget::limits`] for a validity query that a quick `unknown` from incomplete
    /// instantiation asks again, deeper (`QueryLimits::deepen`). A back end opts in where
    /// deeper instances cannot outrun what its encoding means to prove: the symbolic engine
    /// does; the VCG does not, since its function definitions would unroll past the depth
    /// Viper's verifiers reach (`0895.vpr` proves an assertion the corpus expects to fail).
    pub fn proof_limits(&self) -> germanium_smt::QueryLimits {
        germanium_smt::QueryLimits {
            deepen: true,
            ..self.limits()
        }
    }

    /// The limits of a feasibility check: whether a branch or an alias may be possible,
    /// never whether an assertion holds. Its `unknown` counts as "possible", which is
    /// always sound, so it gets a small share of the budget: a path whose feasibility
    /// cannot be settled quickly is explored rather than paid for with a whole budget
    /// (Silicon's short `--checkTimeout` for the same checks). Deterministic like the rest.
    pub fn check_limits(&self) -> germanium_smt::QueryLimits {
        germanium_smt::QueryLimits {
            rlimit: Some((self.resources / CHECK_SHARE).max(1)),
            ..self.limits()
        }
    }

    /// Which limit a query that ended `unknown` for `reason` ran into, in words; `None`
    /// when the solver answered `unknown` without running out of anything (an incomplete
    /// theory or quantifier instantiation).
    pub fn exhausted(&self, reason: &str) -> Option<String> {
        let reason = reason.to_ascii_lowercase();
        let secs = self.timeout.as_secs_f64();
        if reason.contains(germanium_smt::OUT_OF_MEMORY) || reason.contains("memory") {
            Some(format!(
                "the solver reached its memory limit of {MEMORY_LIMIT_MB} MB"
            ))
        } else if reason.contains("resource") || reason.contains("canceled") {
            Some(format!(
                "the solver used up its budget of {} resource units (--timeout {secs})",
                self.resources
            ))
        } else if reason.contains("timeout") {
            Some(format!(
                "the solver reached the last-resort wall-clock limit of {} s (--timeout {secs}); \
                 this limit depends on machine load",
                self.wall_clock.as_secs_f64()
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_maps_to_resources_and_wall_clock() {
        let b = Budget::from_timeout(Duration::from_secs(5));
        assert_eq!(b.resources, 50_000_000);
        assert_eq!(b.wall_clock, Duration::from_secs(150));
        let tiny = Budget::from_timeout(Duration::from_millis(1));
        assert_eq!(tiny.resources, 10_000);
    }

    #[test]
    fn says_which_limit_ran_out() {
        let b = Budget::from_timeout(Duration::from_secs(5));
        assert!(b
            .exhausted("max. resource limit exceeded")
            .unwrap()
            .contains("50000000 resource units"));
        assert!(b.exhausted("canceled").unwrap().contains("resource units"));
        assert!(b.exhausted("timeout").unwrap().contains("wall-clock"));
        assert!(b.exhausted("out of memory").unwrap().contains("memory"));
        assert_eq!(b.exhausted("(incomplete quantifiers)"), None);
    }
}
