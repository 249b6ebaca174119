//! A campaign: generated programs and mutants, judged by the oracles, until a budget is
//! spent; every finding is triaged, the unsound ones minimised and kept.
//!
//! Program `n` of a campaign with seed `s` is a function of `(s, n)` only, so a campaign is
//! reproducible up to where its budget ends it (a count budget ends it at the same place).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::oracles::{judge, Concrete, Finding, Judgement, MemberJudgement, OracleSettings};
use crate::{generate, minimise, mutate};

/// What a campaign is asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    pub seed: u64,
    /// Stop after this many programs …
    pub programs: Option<usize>,
    /// … or once this much time has passed (whichever comes first).
    pub budget: Option<Duration>,
    /// Programs to mutate (one program in three is a mutant when there are some).
    pub mutate: Vec<PathBuf>,
    /// Where minimised findings and the report are written.
    pub out: Option<PathBuf>,
    pub oracles: OracleSettings,
    /// Tries of the minimiser per finding kept.
    pub minimise_tries: usize,
}

/// A finding kept: where its program came from, the member, what is wrong, and the
/// program minimised.
#[derive(Clone, Debug, Serialize)]
pub struct Kept {
    pub origin: String,
    pub member: String,
    pub finding: Finding,
    pub cause: String,
    pub program: String,
    pub saved: Option<PathBuf>,
}

/// What a campaign found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub seed: u64,
    pub programs: usize,
    pub generated: usize,
    pub mutants: usize,
    pub ill_formed: usize,
    pub members: usize,
    /// Members both back ends verified, both failed, and with a concrete failing run.
    pub verified_by_both: usize,
    pub failed_by_both: usize,
    pub concrete_failures: usize,
    /// Members with no verdict from a back end (unsupported, solver limit).
    pub no_verdict: usize,
    /// Members Silicon was asked about, and those it gave no verdict on.
    pub silicon_asked: usize,
    pub silicon_no_verdict: usize,
    /// Disagreements between the back ends, by cause (see [`triage`]).
    pub disagreements: BTreeMap<String, usize>,
    pub unsound: Vec<Kept>,
    /// The first program of each cause of disagreement, minimised.
    pub disagreement_examples: Vec<Kept>,
    /// Wall-clock seconds the campaign took (for the record; nothing depends on it).
    pub seconds: f64,
}

/// Runs a campaign; `progress` hears of each program judged.
pub fn run(settings: &Settings, progress: &mut dyn FnMut(&Report)) -> Report {
    let started = Instant::now();
    let sources = mutate::sources(&settings.mutate, 6_000);
    let mut report = Report {
        seed: settings.seed,
        ..Report::default()
    };
    for n in 0u64.. {
        if settings.programs.is_some_and(|p| report.programs >= p)
            || settings.budget.is_some_and(|b| started.elapsed() >= b)
        {
            break;
        }
        let seed = settings.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n;
        let (origin, text, original) = match pick_mutant(&sources, seed, n) {
            Some((origin, text, original)) => {
                report.mutants += 1;
                (origin, text, Some(original))
            }
            None => {
                report.generated += 1;
                let text = generate::program(seed);
                (format!("generated, seed {seed}"), text, None)
            }
        };
        report.programs += 1;
        // The program being judged, kept until the next: should the process die on it (a
        // stack overflow aborts), it is there to reproduce.
        if let Some(dir) = &settings.out {
            let _ = std::fs::create_dir_all(dir);
            let _ = std::fs::write(dir.join("current.vpr"), format!("// {origin}\n{text}"));
        }
        let judging = Instant::now();
        let judgement = judge(&text, &settings.oracles);
        let slow = judging.elapsed() > SLOW_TO_MINIMISE;
        let kept = report.unsound.len() + report.disagreement_examples.len();
        let program = Judged {
            origin: &origin,
            text: &text,
            original: original.as_deref(),
            slow,
        };
        record(&mut report, settings, &program, &judgement);
        progress(&report);
        // Written as it goes, so a campaign stopped early keeps what it found.
        if report.programs.is_multiple_of(25)
            || kept != report.unsound.len() + report.disagreement_examples.len()
        {
            report.seconds = started.elapsed().as_secs_f64();
            write_report(settings, &report);
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    write_report(settings, &report);
    report
}

fn write_report(settings: &Settings, report: &Report) {
    let Some(dir) = &settings.out else {
        return;
    };
    let _ = std::fs::create_dir_all(dir);
    if let Ok(json) = serde_json::to_string_pretty(report) {
        let _ = std::fs::write(dir.join("report.json"), json);
    }
    let _ = std::fs::write(dir.join("report.md"), summary(report));
}

/// One program in three is a mutant of one of `sources` (when there are some).
fn pick_mutant(sources: &[PathBuf], seed: u64, n: u64) -> Option<(String, String, String)> {
    if sources.is_empty() || n % 3 != 2 {
        return None;
    }
    let path = &sources[(seed % sources.len() as u64) as usize];
    let text = std::fs::read_to_string(path).ok()?;
    let m = mutate::mutant(&text, seed)?;
    Some((format!("{}: {}", path.display(), m.change), m.text, text))
}

/// A program judged: where it came from, its text, and for a mutant the program it was
/// made from.
struct Judged<'p> {
    origin: &'p str,
    text: &'p str,
    original: Option<&'p str>,
    /// Judging it took longer than [`SLOW_TO_MINIMISE`]: a finding is kept as it is.
    slow: bool,
}

/// A program slower to judge than this is not minimised (each try judges it again): the
/// finding is kept whole. Only whether a finding is minimised depends on the machine.
const SLOW_TO_MINIMISE: Duration = Duration::from_secs(5);

fn record(report: &mut Report, settings: &Settings, program: &Judged<'_>, j: &Judgement) {
    let (origin, text) = (program.origin, program.text);
    let mut original_judgement: Option<Judgement> = None;
    if j.ill_formed {
        report.ill_formed += 1;
        return;
    }
    for m in &j.members {
        report.members += 1;
        report.verified_by_both += usize::from(m.symbex.verified() && m.vcg.verified());
        report.failed_by_both += usize::from(m.symbex.failed() && m.vcg.failed());
        report.concrete_failures += usize::from(matches!(m.concrete, Concrete::Fails { .. }));
        report.no_verdict += usize::from(!m.symbex.verified() && !m.symbex.failed())
            + usize::from(!m.vcg.verified() && !m.vcg.failed());
        if let Some(s) = &m.silicon {
            report.silicon_asked += 1;
            report.silicon_no_verdict += usize::from(!s.verified() && !s.failed());
        }
        let Some(finding) = m.finding() else {
            continue;
        };
        let base = triage(m, &finding);
        let mut cause = base.clone();
        // A disagreement the mutation did not make: the unmutated program has it too.
        if let (Finding::Disagreement { .. }, Some(original)) = (&finding, program.original) {
            let before =
                original_judgement.get_or_insert_with(|| judge(original, &settings.oracles));
            let same = before
                .members
                .iter()
                .find(|x| x.name == m.name)
                .and_then(|x| x.finding())
                .is_some_and(|f| f == finding);
            if same {
                cause = format!("known (the unmutated program has it too): {cause}");
            }
        }
        let first_of_cause = !report.disagreements.contains_key(&cause);
        let unsound = matches!(finding, Finding::Unsound { .. });
        if !unsound {
            *report.disagreements.entry(cause.clone()).or_default() += 1;
        }
        // One example of each new cause, minimised; a known one is the corpus's already.
        if !unsound && (!first_of_cause || base != cause) {
            continue;
        }
        // Shrunk while the member keeps the same cause.
        let member = m.name.clone();
        let tries = if program.slow {
            0
        } else {
            settings.minimise_tries
        };
        let small = minimise::minimise(text, tries, &mut |candidate| {
            let again = judge(candidate, &settings.oracles);
            again
                .members
                .iter()
                .find(|x| x.name == member)
                .and_then(|x| x.finding().map(|f| triage(x, &f)))
                .is_some_and(|c| c == base)
        });
        let mut kept = Kept {
            origin: origin.to_string(),
            member,
            finding,
            cause,
            program: small,
            saved: None,
        };
        if let Some(dir) = &settings.out {
            let kind = if unsound { "unsound" } else { "disagreement" };
            let count = report.unsound.len() + report.disagreement_examples.len();
            let path = dir.join(format!("{kind}-{count}.vpr"));
            let header = format!(
                "// {}\n// member {}: {}\n",
                kept.origin, kept.member, kept.cause
            );
            let _ = std::fs::create_dir_all(dir);
            if std::fs::write(&path, format!("{header}{}", kept.program)).is_ok() {
                kept.saved = Some(path);
            }
        }
        if unsound {
            report.unsound.push(kept);
        } else {
            report.disagreement_examples.push(kept);
        }
    }
}

/// The cause of a finding, for counting: who verified, who failed with which errors, and
/// what the concrete runs say of the member.
pub fn triage(m: &MemberJudgement, finding: &Finding) -> String {
    let concrete = match &m.concrete {
        Concrete::Fails { check, .. } => format!("a run fails `{check}`"),
        Concrete::NoFailure {
            exhaustive: true, ..
        } => "no run fails (all runs tried): the failing back end is incomplete".into(),
        Concrete::NoFailure { .. } => "no failing run found".into(),
        Concrete::Unknown(_) => "no concrete verdict".into(),
        Concrete::NotRun => "not run concretely".into(),
    };
    let errors = |v: &crate::oracles::Verdict| match v {
        crate::oracles::Verdict::Failed(e) => {
            let mut ids: Vec<&str> = e.iter().map(|(_, id)| id.as_str()).collect();
            ids.sort();
            ids.dedup();
            ids.join(", ")
        }
        _ => String::new(),
    };
    match finding {
        Finding::Unsound { backends, .. } => {
            format!(
                "{} {}: {} verified; {concrete}",
                m.kind,
                m.name,
                backends.join(" and ")
            )
        }
        Finding::Disagreement {
            verified_by,
            failed_by,
        } => {
            let failed = if *failed_by == "vcg" {
                &m.vcg
            } else {
                &m.symbex
            };
            format!(
                "{verified_by} verified, {failed_by} failed [{}]; {concrete}",
                errors(failed)
            )
        }
        Finding::SiliconDiffers { germanium_verified } => {
            let said = if *germanium_verified {
                "both back ends verified, Silicon failed".to_string()
            } else {
                format!(
                    "Silicon verified, both back ends failed [{}]",
                    errors(&m.symbex)
                )
            };
            format!("{said}; {concrete}")
        }
    }
}

/// The report as Markdown.
pub fn summary(r: &Report) -> String {
    let mut s = format!(
        "# Adversary campaign, seed {}\n\n{} programs ({} generated, {} mutants; {} ill-formed), {} members, {:.0} s.\n\n\
         - verified by both back ends: {}\n- failed by both: {}\n- a concrete run fails: {}\n- no verdict from a back end: {}\n\
         - **unsound verdicts: {}**\n\n## Disagreements by cause\n\n",
        r.seed,
        r.programs,
        r.generated,
        r.mutants,
        r.ill_formed,
        r.members,
        r.seconds,
        r.verified_by_both,
        r.failed_by_both,
        r.concrete_failures,
        r.no_verdict,
        r.unsound.len()
    );
    if r.silicon_asked > 0 {
        s = s.replace(
            "\n## Disagreements",
            &format!(
                "- Silicon asked about {} members, no verdict on {}\n\n## Disagreements",
                r.silicon_asked, r.silicon_no_verdict
            ),
        );
    }
    if r.disagreements.is_empty() {
        s.push_str("none\n");
    }
    for (cause, n) in &r.disagreements {
        s.push_str(&format!("- {n} × {cause}\n"));
    }
    for (title, kept) in [
        ("Unsound verdicts", &r.unsound),
        ("Examples of disagreements", &r.disagreement_examples),
    ] {
        if kept.is_empty() {
            continue;
        }
        s.push_str(&format!("\n## {title}\n"));
        for k in kept {
            s.push_str(&format!(
                "\n- {} (member `{}`, from {}){}\n\n```viper\n{}```\n",
                k.cause,
                k.member,
                k.origin,
                k.saved
                    .as_ref()
                    .map(|p| format!(", kept as `{}`", p.display()))
                    .unwrap_or_default(),
                k.program
            ));
        }
    }
    s
}
