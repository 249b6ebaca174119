//! Bounded search for a failing run: every sequence of choices, smallest first (by the sum
//! of the options picked, so each choice point gets its small values before any gets large
//! ones), up to a number of runs. Deterministic: the same program, method and bound give
//! the same runs in the same order.

use crate::exec::{Choices, Failure, Machine, Outcome};

/// Choices replayed from a prefix, then the first option of each new point.
struct Enumerator {
    /// Each choice point's pick and number of options.
    picks: Vec<(usize, usize)>,
    at: usize,
    /// The largest sum of picks allowed in this round.
    weight: usize,
    /// Whether the weight left out some sequence (a heavier round has more to try).
    cut: bool,
}

impl Choices for Enumerator {
    fn pick(&mut self, options: usize) -> Option<usize> {
        if options == 0 {
            return None;
        }
        if let Some((p, n)) = self.picks.get_mut(self.at) {
            *n = options;
            self.at += 1;
            return Some((*p).min(options - 1));
        }
        if self.picks.len() >= MAX_CHOICES {
            return None;
        }
        self.picks.push((0, options));
        self.at += 1;
        Some(0)
    }
}

/// Choice points in one run at most.
const MAX_CHOICES: usize = 256;
/// Evaluation steps of one search at most: runs over big quantifier domains stop the search
/// early, deterministically.
const MAX_STEPS: u64 = 20_000_000;

/// What picking option `p` weighs: its bit length, so a far option at one point (a
/// sequence of seven objects, the integer 7) costs about as much as a few near ones.
fn cost(p: usize) -> usize {
    (usize::BITS - p.leading_zeros()) as usize
}

impl Enumerator {
    fn sum(&self) -> usize {
        self.picks.iter().map(|(p, _)| cost(*p)).sum()
    }

    /// The next sequence within the weight: the last point with an option left moves on.
    fn advance(&mut self) -> bool {
        self.picks.truncate(self.at);
        while let Some((p, n)) = self.picks.pop() {
            let rest: usize = self.picks.iter().map(|(p, _)| cost(*p)).sum();
            if p + 1 < n {
                if rest + cost(p + 1) <= self.weight {
                    self.picks.push((p + 1, n));
                    self.at = 0;
                    return true;
                }
                self.cut = true;
            }
        }
        false
    }
}

/// What the search found.
#[derive(Debug)]
pub enum Found {
    /// A run that fails as asked, with its pre-state.
    Failure(Box<Failure>),
    /// No such run among those tried; `exhaustive` when every sequence of choices was;
    /// `unknown`: why some run could not be finished concretely (then nothing is known of
    /// the runs it stands for).
    None {
        runs: usize,
        exhaustive: bool,
        unknown: Option<String>,
    },
}

/// Searches runs (`run`: one of the machine's, of a method or a function, from the choices
/// given) for a failure `wanted` accepts, at most `max_runs` runs.
pub fn search(
    machine: &Machine,
    run: &dyn Fn(&mut dyn Choices) -> Outcome,
    max_runs: usize,
    wanted: &dyn Fn(&Failure) -> bool,
) -> Found {
    let mut runs = 0;
    let mut unknown: Option<String> = None;
    let start = machine.steps();
    for weight in 0.. {
        let mut e = Enumerator {
            picks: Vec::new(),
            at: 0,
            weight,
            cut: false,
        };
        loop {
            if runs >= max_runs || machine.steps() - start > MAX_STEPS {
                return Found::None {
                    runs,
                    exhaustive: false,
                    unknown,
                };
            }
            runs += 1;
            e.at = 0;
            let outcome = run(&mut e);
            if let Outcome::Unknown(why) = &outcome {
                unknown.get_or_insert_with(|| why.clone());
            }
            // Runs lighter than the weight were tried in an earlier round.
            if e.sum() == weight {
                if let Outcome::Failed(f) = outcome {
                    if wanted(&f) {
                        return Found::Failure(f);
                    }
                }
            }
            if !e.advance() {
                break;
            }
        }
        if !e.cut {
            return Found::None {
                runs,
                exhaustive: true,
                unknown,
            };
        }
    }
    unreachable!("the rounds end by returning")
}
