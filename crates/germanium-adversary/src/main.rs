//! `germanium-adversary`: runs a campaign (see the library's `campaign`), or judges one file.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use germanium_adversary::campaign::{self, Settings};
use germanium_adversary::oracles::{judge, OracleSettings};
use germanium_adversary::silicon::Silicon;

#[derive(Parser)]
#[command(
    name = "germanium-adversary",
    about = "Tries to make Germanium verify something false"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generated programs and mutants judged by both back ends and concrete runs, until a
    /// budget is spent; writes report.md and report.json, and each finding minimised.
    Campaign {
        /// The campaign's seed: the same seed tries the same programs in the same order.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Stop after this many programs.
        #[arg(long)]
        programs: Option<usize>,
        /// Stop after this many seconds (whichever comes first).
        #[arg(long)]
        budget: Option<u64>,
        /// A folder of Viper programs to mutate (repeatable), e.g. ../shared/viper-tests.
        #[arg(long)]
        mutate: Vec<PathBuf>,
        /// Where the report and the findings go.
        #[arg(long, default_value = "adversary-out")]
        out: PathBuf,
        /// Solver budget per query, in seconds (Z3's resource units, as `--timeout`).
        #[arg(long, default_value_t = 2)]
        timeout: u64,
        /// Concrete runs per member at most.
        #[arg(long, default_value_t = 400)]
        concrete_runs: usize,
        /// Tries of the minimiser per finding.
        #[arg(long, default_value_t = 150)]
        minimise_tries: usize,
        /// Also ask Silicon (a jar, e.g. the one of PyPI's nagini wheel; needs Java 17 and
        /// $Z3_EXE). By hand only: a JVM per program.
        #[arg(long)]
        silicon: Option<PathBuf>,
    },
    /// Judges one file: each member's verdict by each oracle, as JSON.
    Judge {
        file: PathBuf,
        /// Also ask Silicon (see `campaign --silicon`).
        #[arg(long)]
        silicon: Option<PathBuf>,
    },
    /// Prints the generated program for a seed.
    Generate { seed: u64 },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Campaign {
            seed,
            programs,
            budget,
            mutate,
            out,
            timeout,
            concrete_runs,
            minimise_tries,
            silicon,
        } => {
            if programs.is_none() && budget.is_none() {
                eprintln!("germanium-adversary: give --programs N or --budget SECONDS");
                return std::process::ExitCode::from(2);
            }
            let settings = Settings {
                seed,
                programs,
                budget: budget.map(Duration::from_secs),
                mutate,
                out: Some(out.clone()),
                oracles: OracleSettings {
                    timeout: Duration::from_secs(timeout),
                    concrete_runs,
                    silicon: silicon.map(silicon_oracle),
                },
                minimise_tries,
            };
            let report = campaign::run(&settings, &mut |r| {
                if r.programs.is_multiple_of(50) {
                    eprintln!(
                        "{} programs, {} members, {} disagreements, {} unsound",
                        r.programs,
                        r.members,
                        r.disagreements.values().sum::<usize>(),
                        r.unsound.len()
                    );
                }
            });
            print!("{}", campaign::summary(&report));
            eprintln!("report: {}", out.join("report.md").display());
            if report.unsound.is_empty() {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            }
        }
        Command::Judge { file, silicon } => {
            let Ok(text) = std::fs::read_to_string(&file) else {
                eprintln!("germanium-adversary: cannot read {}", file.display());
                return std::process::ExitCode::from(2);
            };
            let settings = OracleSettings {
                silicon: silicon.map(silicon_oracle),
                ..OracleSettings::default()
            };
            let j = judge(&text, &settings);
            println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
            std::process::ExitCode::SUCCESS
        }
        Command::Generate { seed } => {
            print!("{}", germanium_adversary::generate::program(seed));
            std::process::ExitCode::SUCCESS
        }
    }
}

/// Silicon from its jar, with the Z3 of `$Z3_EXE` (or `z3` on the PATH).
fn silicon_oracle(jar: PathBuf) -> Silicon {
    // Absolute: Silicon runs in a scratch directory.
    let absolute = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    Silicon {
        jar: absolute(jar),
        z3: absolute(
            std::env::var_os("Z3_EXE")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("z3")),
        ),
        limit: Duration::from_secs(120),
    }
}
