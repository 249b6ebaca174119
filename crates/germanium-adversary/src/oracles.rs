//! The oracles, independent of each other: the symbolic-execution back end, the
//! verification-condition back end, and concrete runs (`germanium-concrete`, which shares
//! nothing with either back end but the front end). A member a back end verifies but a
//! concrete run fails is unsound by definition; a member the back ends disagree on is
//! triaged by the concrete runs.

use std::path::Path;
use std::time::Duration;

use germanium_concrete::{search, Evaluator, Found, Machine};
use germanium_driver::{run_text, Backend, Mode, Options, Stage};
use germanium_syntax::ast::{ItemKind, NodeIdGen, Program};
use germanium_syntax::{SourceMap, Span};
use serde::Serialize;

/// What one back end said of one member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    Verified,
    /// Its errors: line and error id.
    Failed(Vec<(u32, String)>),
    /// No verdict: an unsupported construct, a solver failure or limit.
    NoVerdict(String),
}

impl Verdict {
    pub fn verified(&self) -> bool {
        matches!(self, Verdict::Verified)
    }
    pub fn failed(&self) -> bool {
        matches!(self, Verdict::Failed(_))
    }
}

/// What the concrete runs found for one member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Concrete {
    /// A run that fails: the check, its line, why.
    Fails {
        check: String,
        line: u32,
        reason: String,
    },
    /// No failing run among those tried (`exhaustive`: every run was).
    NoFailure { runs: usize, exhaustive: bool },
    /// Some run could not be computed concretely.
    Unknown(String),
    /// Not run (predicates, or the program has no concrete reading).
    NotRun,
}

/// One member's verdicts.
#[derive(Clone, Debug, Serialize)]
pub struct MemberJudgement {
    pub name: String,
    pub kind: &'static str,
    pub symbex: Verdict,
    pub vcg: Verdict,
    pub concrete: Concrete,
    /// Silicon's verdict, where it was asked (see `silicon`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub silicon: Option<Verdict>,
}

/// What is wrong with a member's verdicts, if anything.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Finding {
    /// A back end verified a member a concrete run fails (`both`: the two back ends did).
    Unsound {
        backends: Vec<&'static str>,
        check: String,
        line: u32,
    },
    /// One back end verified, the other failed; no concrete run fails.
    Disagreement {
        verified_by: &'static str,
        failed_by: &'static str,
    },
    /// The back ends agree, Silicon does not (`germanium_verified`: they verified, it
    /// failed).
    SiliconDiffers { germanium_verified: bool },
}

impl Finding {
    /// A short name of the kind of finding, for reports.
    pub fn cause(&self) -> String {
        match self {
            Finding::Unsound {
                backends, check, ..
            } => {
                format!(
                    "unsound: {} verified, a run fails `{check}`",
                    backends.join(" and ")
                )
            }
            Finding::Disagreement {
                verified_by,
                failed_by,
            } => format!("disagreement: {verified_by} verified, {failed_by} failed"),
            Finding::SiliconDiffers { germanium_verified } => format!(
                "Silicon {}",
                if *germanium_verified {
                    "failed what both back ends verified"
                } else {
                    "verified what both back ends failed"
                }
            ),
        }
    }
}

impl MemberJudgement {
    /// What is wrong with these verdicts.
    pub fn finding(&self) -> Option<Finding> {
        let verified: Vec<&'static str> = [("symbex", &self.symbex), ("vcg", &self.vcg)]
            .into_iter()
            .filter(|(_, v)| v.verified())
            .map(|(n, _)| n)
            .collect();
        if let (false, Concrete::Fails { check, line, .. }) = (verified.is_empty(), &self.concrete)
        {
            return Some(Finding::Unsound {
                backends: verified,
                check: check.clone(),
                line: *line,
            });
        }
        match (&self.symbex, &self.vcg) {
            (Verdict::Verified, Verdict::Failed(_)) => Some(Finding::Disagreement {
                verified_by: "symbex",
                failed_by: "vcg",
            }),
            (Verdict::Failed(_), Verdict::Verified) => Some(Finding::Disagreement {
                verified_by: "vcg",
                failed_by: "symbex",
            }),
            (a, b) if a == b || a.failed() && b.failed() => match &self.silicon {
                Some(s) if s.verified() && a.failed() || s.failed() && a.verified() => {
                    Some(Finding::SiliconDiffers {
                        germanium_verified: a.verified(),
                    })
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// How the oracles are asked.
#[derive(Clone, Debug)]
pub struct OracleSettings {
    /// Budget per solver query (seconds of solver work; deterministic).
    pub timeout: Duration,
    /// Concrete runs per member at most.
    pub concrete_runs: usize,
    /// Silicon as a fourth oracle (campaigns by hand only).
    pub silicon: Option<crate::silicon::Silicon>,
}

impl Default for OracleSettings {
    fn default() -> Self {
        OracleSettings {
            timeout: Duration::from_secs(2),
            concrete_runs: 400,
            silicon: None,
        }
    }
}

/// The judgement of a whole program.
#[derive(Clone, Debug, Serialize)]
pub struct Judgement {
    /// The program is not well-formed (it does not parse or type-check): nothing was asked.
    pub ill_formed: bool,
    pub members: Vec<MemberJudgement>,
}

impl Judgement {
    pub fn findings(&self) -> Vec<(String, Finding)> {
        self.members
            .iter()
            .filter_map(|m| m.finding().map(|f| (m.name.clone(), f)))
            .collect()
    }
}

/// Asks every oracle about every member of `text` (a program without relative imports).
pub fn judge(text: &str, settings: &OracleSettings) -> Judgement {
    let symbex = back_end(text, Backend::Symbex, settings);
    let Some(symbex) = symbex else {
        return Judgement {
            ill_formed: true,
            members: Vec::new(),
        };
    };
    let vcg = back_end(text, Backend::Vcg, settings).unwrap_or_default();
    let concrete = concrete_runs(text, settings);
    let silicon = settings.silicon.as_ref().map(|s| silicon_verdicts(s, text));
    let members = symbex
        .into_iter()
        .map(|(name, kind, verdict)| {
            let other = vcg
                .iter()
                .find(|(n, k, _)| *n == name && *k == kind)
                .map(|(_, _, v)| v.clone())
                .unwrap_or(Verdict::NoVerdict("not verified".into()));
            let concrete = concrete
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| c.clone())
                .unwrap_or(Concrete::NotRun);
            let silicon = silicon
                .as_ref()
                .and_then(|all| all.iter().find(|(n, _)| *n == name))
                .map(|(_, v)| v.clone());
            MemberJudgement {
                name,
                kind,
                symbex: verdict,
                vcg: other,
                concrete,
                silicon,
            }
        })
        .collect();
    Judgement {
        ill_formed: false,
        members,
    }
}

type MemberVerdicts = Vec<(String, &'static str, Verdict)>;

/// Silicon's verdict on each member, placed by its errors' lines.
fn silicon_verdicts(silicon: &crate::silicon::Silicon, text: &str) -> Vec<(String, Verdict)> {
    use crate::silicon::Answer;
    let mut sources = SourceMap::new();
    let Some((program, _)) = front_end(text, &mut sources) else {
        return Vec::new();
    };
    let answer = silicon.run(text);
    members_of(&program)
        .into_iter()
        .map(|(name, _, span)| {
            let (first, last) = (sources.start(span).line, sources.end(span).line);
            let verdict = match &answer {
                Answer::Verified => Verdict::Verified,
                Answer::Failed(lines) => {
                    let mine: Vec<(u32, String)> = lines
                        .iter()
                        .filter(|l| (first..=last).contains(*l))
                        .map(|l| (*l, "silicon".to_string()))
                        .collect();
                    if mine.is_empty() {
                        Verdict::Verified
                    } else {
                        Verdict::Failed(mine)
                    }
                }
                Answer::None(why) => Verdict::NoVerdict(why.clone()),
            };
            (name, verdict)
        })
        .collect()
}

/// One back end's verdict on each member; `None` for a program that is not well-formed.
fn back_end(text: &str, backend: Backend, settings: &OracleSettings) -> Option<MemberVerdicts> {
    let mut options = Options::new(Mode::Verify);
    options.backend = backend;
    options.timeout = Some(settings.timeout);
    options.jobs = 1;
    let report = run_text(Path::new("adversary.vpr"), text.to_string(), &options);
    if report.stage < Stage::Verify {
        return None;
    }
    let program = report.program.as_ref()?;
    let members = members_of(program);
    let mut out: MemberVerdicts = members
        .iter()
        .map(|(name, kind, _)| (name.clone(), *kind, Verdict::Verified))
        .collect();
    let mut general: Option<String> = None;
    for d in report.diagnostics.iter().filter(|d| d.is_error()) {
        let line = report.sources.start(d.span).line;
        let at = members
            .iter()
            .position(|(_, _, span)| span.file == d.span.file && contains(*span, d.span));
        let Some(i) = at else {
            general.get_or_insert_with(|| format!("{}: {}", d.id, d.message));
            continue;
        };
        let verdict = &mut out[i].2;
        if d.id.starts_with("internal") {
            *verdict = Verdict::NoVerdict(format!("{}: {}", d.id, d.message));
            continue;
        }
        match verdict {
            Verdict::Verified => *verdict = Verdict::Failed(vec![(line, d.id.clone())]),
            Verdict::Failed(errors) => errors.push((line, d.id.clone())),
            Verdict::NoVerdict(_) => {}
        }
    }
    // An error outside every member (no solver, a program-wide problem): no verdict.
    if let Some(why) = general {
        for (_, _, v) in out.iter_mut() {
            if v.verified() {
                *v = Verdict::NoVerdict(why.clone());
            }
        }
    }
    Some(out)
}

fn contains(outer: Span, inner: Span) -> bool {
    outer.start <= inner.start && inner.start < outer.end.max(outer.start + 1)
}

/// The program's members: name, kind and span.
fn members_of(program: &Program) -> Vec<(String, &'static str, Span)> {
    program
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Method(m) => Some((m.name.name.clone(), "method", item.span)),
            ItemKind::Function(f) => Some((f.name.name.clone(), "function", item.span)),
            ItemKind::Predicate(p) => Some((p.name.name.clone(), "predicate", item.span)),
            _ => None,
        })
        .collect()
}

/// The concrete runs of each method and function (by name).
fn concrete_runs(text: &str, settings: &OracleSettings) -> Vec<(String, Concrete)> {
    let text = text.to_string();
    let runs = settings.concrete_runs;
    // The evaluator recurses with the program's nesting: the driver's stack size.
    let worker = std::thread::Builder::new()
        .stack_size(germanium_driver::DEFAULT_STACK_SIZE)
        .spawn(move || concrete_in_thread(&text, runs));
    match worker.map(|h| h.join()) {
        Ok(Ok(found)) => found,
        _ => Vec::new(),
    }
}

fn concrete_in_thread(text: &str, max_runs: usize) -> Vec<(String, Concrete)> {
    let mut sources = SourceMap::new();
    let Some((program, semantics)) = front_end(text, &mut sources) else {
        return Vec::new();
    };
    let ev = Evaluator::new(&program, &semantics);
    let machine = Machine::new(&ev);
    let mut out = Vec::new();
    for item in &program.items {
        let (name, function) = match &item.kind {
            ItemKind::Method(m) if m.body.is_some() => (m.name.name.clone(), false),
            ItemKind::Function(f) => (f.name.name.clone(), true),
            _ => continue,
        };
        let run = |choices: &mut dyn germanium_concrete::Choices| {
            if function {
                machine.run_function(&name, choices)
            } else {
                machine.run(&name, choices)
            }
        };
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            search(&machine, &run, max_runs, &|_| true)
        }));
        let verdict = match found {
            Ok(Found::Failure(f)) => Concrete::Fails {
                check: format!("{:?}", f.check),
                line: sources.start(f.span).line,
                reason: f.reason.clone(),
            },
            Ok(Found::None {
                runs,
                exhaustive,
                unknown: None,
            }) => Concrete::NoFailure { runs, exhaustive },
            Ok(Found::None {
                unknown: Some(why), ..
            }) => Concrete::Unknown(why),
            Err(_) => Concrete::Unknown("the concrete run panicked".into()),
        };
        out.push((name, verdict));
    }
    out
}

/// Parses and type-checks `text` (no imports followed): the program and its semantics, or
/// `None` where it is not well-formed.
pub fn front_end(
    text: &str,
    sources: &mut SourceMap,
) -> Option<(Program, germanium_semantics::Semantics)> {
    let mut ids = NodeIdGen::default();
    let file = sources.add("adversary.vpr".into(), text.to_string());
    let (items, diagnostics) = germanium_syntax::parse_file(file, text, &mut ids);
    if !diagnostics.is_empty() {
        return None;
    }
    let mut program = Program {
        items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    if !germanium_syntax::expand_macros(&mut program, &mut ids).is_empty() {
        return None;
    }
    let (semantics, diagnostics) = germanium_semantics::check_program(&program, ids.count());
    if diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    Some((program, semantics))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(symbex: Verdict, vcg: Verdict, concrete: Concrete) -> MemberJudgement {
        MemberJudgement {
            name: "m".into(),
            kind: "method",
            symbex,
            vcg,
            concrete,
            silicon: None,
        }
    }

    fn fails() -> Concrete {
        Concrete::Fails {
            check: "Assert".into(),
            line: 3,
            reason: "false".into(),
        }
    }

    #[test]
    fn a_verdict_a_run_contradicts_is_unsound() {
        let failed = Verdict::Failed(vec![(3, "assert.failed:assertion.false".into())]);
        let m = member(Verdict::Verified, failed.clone(), fails());
        assert_eq!(
            m.finding(),
            Some(Finding::Unsound {
                backends: vec!["symbex"],
                check: "Assert".into(),
                line: 3
            })
        );
        let both = member(Verdict::Verified, Verdict::Verified, fails());
        assert!(
            matches!(both.finding(), Some(Finding::Unsound { backends, .. }) if backends.len() == 2)
        );
        assert_eq!(
            member(failed.clone(), failed.clone(), fails()).finding(),
            None
        );
    }

    #[test]
    fn back_ends_that_disagree_are_reported() {
        let failed = Verdict::Failed(vec![(3, "assert.failed:assertion.false".into())]);
        let none = Concrete::NoFailure {
            runs: 10,
            exhaustive: false,
        };
        assert_eq!(
            member(Verdict::Verified, failed.clone(), none.clone()).finding(),
            Some(Finding::Disagreement {
                verified_by: "symbex",
                failed_by: "vcg"
            })
        );
        assert_eq!(
            member(
                Verdict::NoVerdict("unsupported".into()),
                Verdict::Verified,
                none
            )
            .finding(),
            None
        );
    }

    #[test]
    fn the_oracles_judge_each_member() {
        let text = "field f: Int\nmethod good(x: Ref)\n  requires acc(x.f) && x.f > 0\n{ assert x.f > 0 }\nmethod bad(x: Ref)\n  requires acc(x.f)\n{ assert x.f > 0 }\n";
        let j = judge(text, &OracleSettings::default());
        assert!(!j.ill_formed);
        let good = j
            .members
            .iter()
            .find(|m| m.name == "good")
            .map(|m| m.finding());
        assert_eq!(good, Some(None));
        let bad = j.members.iter().find(|m| m.name == "bad");
        assert!(
            bad.is_some_and(|m| m.symbex.failed()
                && m.vcg.failed()
                && matches!(m.concrete, Concrete::Fails { .. })),
            "{bad:?}"
        );
        assert!(judge("method (", &OracleSettings::default()).ill_formed);
    }
}
