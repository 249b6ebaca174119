//! The command line, as clap derives it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use germanium_driver::{Backend, Mode, Options};

/// Germanium: a verifier for the Viper intermediate verification language.
#[derive(Debug, Parser)]
#[command(name = "germanium", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse, type-check and verify each FILE (constructs Germanium does not verify yet are
    /// reported as `internal:feature.unsupported`).
    Verify(RunArgs),
    /// Parse and type-check each FILE.
    Check(RunArgs),
    /// The per-member result cache (`germanium cache clear` empties it).
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
    /// Verify FILE with the execution log and counterexamples on, and serve a page on
    /// 127.0.0.1 to walk through its symbolic execution: the tree of steps, the store,
    /// heap and path conditions of each, the heap as a graph, and the failed checks with
    /// their counterexamples.
    Debug(DebugArgs),
    /// Serve the Language Server Protocol on standard input and output, for editors:
    /// diagnostics as files are opened, edited and saved, hover with counterexamples, a
    /// code lens per member, document symbols and go to definition.
    Lsp(LspArgs),
    /// What a remote action runs on a worker (docs/remote.md): verify the jobs of MANIFEST,
    /// each member in its slice, and write their results to the output file.
    #[command(hide = true)]
    Action(ActionArgs),
}

#[derive(Debug, Args)]
pub struct ActionArgs {
    /// The manifest (`manifest.json`); the slices it names are next to it.
    #[arg(value_name = "MANIFEST")]
    pub manifest: PathBuf,

    /// Where to write the results.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub program: ProgramArgs,

    #[arg(long = "backend", value_name = "BACKEND", value_parser = parse_backend, default_value = "symbex")]
    pub backend: Backend,

    #[arg(long = "cross-check")]
    pub cross_check: bool,

    #[arg(long = "combinable-wands")]
    pub combinable_wands: bool,

    #[arg(long = "max-branches", value_name = "N")]
    pub max_branches: Option<usize>,
}

impl ActionArgs {
    /// One worker thread: a worker is one core, and a cluster runs many actions at once.
    pub fn options(&self) -> Options {
        let mut options = self.program.options(Mode::Verify);
        options.backend = self.backend;
        options.cross_check = self.cross_check;
        options.combinable_wands = self.combinable_wands;
        options.max_branches = self.max_branches;
        options.jobs = 1;
        options
    }
}

/// Where a Remote Execution API cluster is (docs/remote.md).
#[derive(Debug, Args)]
pub struct RemoteArgs {
    /// Verify members as actions on the Remote Execution API cluster at URL
    /// (`grpc://HOST:PORT`, or `grpcs://HOST:PORT` for TLS): results are looked up in its
    /// action cache and the misses executed on its workers.
    #[arg(long = "remote-executor", value_name = "URL", value_parser = parse_url)]
    pub remote_executor: Option<String>,

    /// The cluster's CAS and action cache, when not the executor's; alone, a cache shared by
    /// a team: members it lacks are verified here and their results stored there.
    #[arg(long = "remote-cache", value_name = "URL", value_parser = parse_url)]
    pub remote_cache: Option<String>,

    /// The cluster's instance name.
    #[arg(long = "remote-instance", value_name = "NAME", default_value = "")]
    pub remote_instance: String,

    /// A header sent with every request, such as an API key (repeatable).
    #[arg(long = "remote-header", value_name = "NAME=VALUE", value_parser = parse_header)]
    pub remote_headers: Vec<(String, String)>,

    /// Certificate authorities (PEM) to trust for `grpcs://`, besides the system's.
    #[arg(long = "remote-tls-ca", value_name = "FILE")]
    pub remote_tls_ca: Option<PathBuf>,

    /// A client certificate (PEM) for clusters that authenticate clients by TLS.
    #[arg(
        long = "remote-tls-cert",
        value_name = "FILE",
        requires = "remote_tls_key"
    )]
    pub remote_tls_cert: Option<PathBuf>,

    /// The client certificate's key (PEM).
    #[arg(
        long = "remote-tls-key",
        value_name = "FILE",
        requires = "remote_tls_cert"
    )]
    pub remote_tls_key: Option<PathBuf>,

    /// What to do when the cluster cannot be reached: `error` (the default) or `local`
    /// (verify here instead, with a warning).
    #[arg(long = "remote-fallback", value_name = "WHAT", value_parser = ["error", "local"], default_value = "error")]
    pub remote_fallback: String,

    /// An action's time limit on a worker, in seconds.
    #[arg(long = "remote-timeout", value_name = "SECONDS", value_parser = parse_seconds, default_value = "600")]
    pub remote_timeout: std::time::Duration,
}

impl RemoteArgs {
    /// The driver's remote options (`None`: no cluster), the actions running `germanium`.
    pub fn options(&self, germanium: PathBuf) -> Option<germanium_driver::RemoteOptions> {
        if self.remote_executor.is_none() && self.remote_cache.is_none() {
            return None;
        }
        let endpoint = |url: &String| germanium_driver::EndpointSettings {
            url: url.clone(),
            tls_ca: self.remote_tls_ca.clone(),
            tls_client_cert: self.remote_tls_cert.clone(),
            tls_client_key: self.remote_tls_key.clone(),
        };
        let settings = germanium_driver::RemoteSettings {
            executor: self.remote_executor.as_ref().map(endpoint),
            cache: self.remote_cache.as_ref().map(endpoint),
            instance: self.remote_instance.clone(),
            headers: self.remote_headers.clone(),
            action_timeout: self.remote_timeout,
        };
        Some(germanium_driver::RemoteOptions::new(
            settings,
            germanium,
            self.remote_fallback == "local",
        ))
    }
}

/// A cluster's address: `grpc://HOST:PORT` or `grpcs://HOST:PORT` (`http(s)://` too).
fn parse_url(text: &str) -> Result<String, String> {
    let rest = ["grpc://", "grpcs://", "http://", "https://"]
        .iter()
        .find_map(|scheme| text.strip_prefix(scheme));
    match rest {
        Some(host)
            if !host.trim_end_matches('/').is_empty()
                && !host.trim_end_matches('/').contains('/') =>
        {
            Ok(text.to_string())
        }
        _ => Err(format!(
            "`{text}` is not grpc://HOST:PORT or grpcs://HOST:PORT"
        )),
    }
}

/// `NAME=VALUE` for `--remote-header`.
fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}

impl Command {
    /// The mode and arguments of `verify` and `check` (`None` for `debug`).
    pub fn mode_and_args(&self) -> Option<(Mode, &RunArgs)> {
        match self {
            Command::Verify(args) => Some((Mode::Verify, args)),
            Command::Check(args) => Some((Mode::Check, args)),
            Command::Debug(_) | Command::Cache { .. } | Command::Lsp(_) | Command::Action(_) => {
                None
            }
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Remove every stored result.
    Clear,
}

#[derive(Debug, Args)]
pub struct DebugArgs {
    /// The Viper file to debug.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The port to serve on (default: a free one; the address is printed).
    #[arg(long, default_value_t = 0)]
    pub port: u16,

    #[command(flatten)]
    pub program: ProgramArgs,
}

impl DebugArgs {
    pub fn options(&self) -> Options {
        self.program.options(Mode::Verify)
    }
}

#[derive(Debug, Args)]
pub struct LspArgs {
    #[command(flatten)]
    pub program: ProgramArgs,

    /// Milliseconds the text must stay unchanged after an edit before it is verified.
    #[arg(long = "debounce-ms", value_name = "MS", default_value_t = 300)]
    pub debounce_ms: u64,

    /// Number of worker threads per file, each with its own solver (default: one per CPU).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Verify every member again instead of taking unchanged members' results from the
    /// result cache.
    #[arg(long = "no-cache")]
    pub no_cache: bool,

    /// Interpret magic wands as combinable wands (as `verify --combinable-wands`).
    #[arg(long = "combinable-wands")]
    pub combinable_wands: bool,

    /// The verifier (as `verify --backend`).
    #[arg(long = "backend", value_name = "BACKEND", value_parser = parse_backend, default_value = "symbex")]
    pub backend: Backend,
}

impl LspArgs {
    /// The driver's options for every run: counterexamples on, for hovers.
    pub fn options(&self) -> Options {
        let mut options = self.program.options(Mode::Verify);
        options.counterexamples = true;
        options.combinable_wands = self.combinable_wands;
        options.backend = self.backend;
        options.jobs = jobs_or_cpus(self.jobs);
        options
    }
}

/// How a program is read and its solver run (shared by every command).
#[derive(Debug, Args)]
pub struct ProgramArgs {
    /// A directory searched for `import <...>` after the built-in library (repeatable; searched
    /// in the order given).
    #[arg(long = "import-path", value_name = "DIR")]
    pub import_paths: Vec<PathBuf>,

    /// The Z3 executable used for verification (default: $Z3_EXE, then `z3` on the PATH).
    #[arg(long, value_name = "PATH")]
    pub z3: Option<PathBuf>,

    /// Budget per solver query, in seconds of solver work (default 5; fractions allowed). It
    /// maps to Z3's deterministic resource limit, 10 million units per second, so a verdict
    /// does not depend on machine load. A query that runs out of it counts as not proved, and
    /// its error says so. 30 times the value is a last-resort wall-clock limit: a query it
    /// stops gives no verdict (the member's `internal` error names the limit).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
}

impl ProgramArgs {
    fn options(&self, mode: Mode) -> Options {
        let mut options = Options::new(mode);
        options.import_paths = self.import_paths.clone();
        options.z3 = self.z3.clone();
        options.timeout = self.timeout;
        options
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style diagnostics and a summary line per file.
    Human,
    /// One JSON object per file and line (JSON Lines).
    Json,
    /// JSON Lines as each member finishes (`"event": "member"`), then each file's line as
    /// with `json`, marked `"event": "file"`.
    JsonStream,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The Viper files to process; several are processed in parallel, reported in this order.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    #[command(flatten)]
    pub program: ProgramArgs,

    /// Write every SMT-LIB command sent to the solver to FILE (it replays with `z3 FILE`).
    /// With several workers each writes its own, FILE's stem with `.w<N>.smt2`; functions,
    /// verified first, go to `<stem>.functions.w<N>.smt2`; with several input files, the
    /// i-th file's logs are named from `<stem>.<i>-<file stem>.smt2` in the same way.
    #[arg(long = "smt-log", value_name = "FILE")]
    pub smt_log: Option<PathBuf>,

    /// Number of worker threads, each with its own solver (default: one per CPU). With one
    /// file its members are verified in parallel; with several, the files are.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Interpret magic wands as combinable wands (seed 004 of the package logic): fractions
    /// of a wand recombine into the whole wand, as wands inside fractional predicate
    /// instances need, and a package must establish the right-hand side with its footprint
    /// cut down to fit each left-hand side holding fractions. The default is Viper's
    /// standard wand.
    #[arg(long = "combinable-wands")]
    pub combinable_wands: bool,

    /// For each failed check, show a state in which it fails: the method's variables and
    /// the field values of the objects held, read from the solver's model of the failing
    /// query (objects named o1, o2, ...). Never changes a result.
    #[arg(long = "counterexample")]
    pub counterexample: bool,

    /// Verify only the members (methods, functions, predicates) whose name matches
    /// PATTERN, a glob (`*`, `?`, `[...]`); repeatable. The others are not verified and
    /// are assumed correct, but for functions: those left out are verified quietly first,
    /// and only a postcondition that holds is an axiom (their errors are not reported).
    #[arg(long = "member", value_name = "PATTERN", value_parser = parse_glob)]
    pub members: Vec<globset::Glob>,

    /// Verify every member, taking no result from the per-member cache and storing none.
    /// By default `verify` keeps each member's result in the user's cache directory
    /// (`$GERMANIUM_CACHE_DIR` to choose another) under a key made of everything the result
    /// depends on, and verifies again only the members whose key changed.
    #[arg(long = "no-cache")]
    pub no_cache: bool,

    /// Write the execution log to FILE as JSON Lines: a record per evaluate, produce,
    /// consume, execute and branch step, with its source place, the state it applies to,
    /// and the failed checks with their unproved queries (docs/execution-log.md). Never
    /// changes a result.
    #[arg(long = "trace", value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// The verifier: `symbex` (symbolic execution, as Silicon; the default) or `vcg`
    /// (verification conditions, as Carbon).
    #[arg(long = "backend", value_name = "BACKEND", value_parser = parse_backend, default_value = "symbex")]
    pub backend: Backend,

    /// Verify every member with both back ends: the errors of either are reported, a
    /// member verifies only if both verify it, and where both give a verdict and they
    /// differ, a `cross-check.disagreement` warning at the member says how.
    #[arg(long = "cross-check")]
    pub cross_check: bool,

    /// Say where each verified member's time went: wall time, time waiting for Z3, queries,
    /// Z3 resource units and bytes of SMT-LIB sent; a table after each file (slowest member
    /// first), or a `stats` field in the JSON formats. Never changes a result.
    #[arg(long = "stats")]
    pub stats: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// A back end's name for `--backend`.
pub(crate) fn parse_backend(text: &str) -> Result<Backend, String> {
    Backend::parse(text).ok_or_else(|| format!("`{text}` is no back end: `symbex` or `vcg`"))
}

/// A glob pattern for `--member`.
fn parse_glob(text: &str) -> Result<globset::Glob, String> {
    globset::Glob::new(text).map_err(|e| format!("`{text}` is not a pattern: {e}"))
}

/// A positive number of seconds, possibly fractional.
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(seconds > 0.0 && seconds <= 1e6) {
        return Err(format!(
            "the timeout must be more than 0 and at most 1000000 seconds, not {text}"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

impl RunArgs {
    pub fn options(&self, mode: Mode) -> Options {
        let mut options = self.program.options(mode);
        options.smt_log = self.smt_log.clone();
        options.combinable_wands = self.combinable_wands;
        options.counterexamples = self.counterexample;
        options.backend = self.backend;
        options.cross_check = self.cross_check;
        options.stats = self.stats;
        options.members = self.member_filter();
        // Parallelism goes where the work is: members of a single file, else whole files.
        options.jobs = if self.files.len() == 1 {
            self.worker_count()
        } else {
            1
        };
        options
    }

    /// `--member`'s patterns as a filter (`None` when there are none).
    pub fn member_filter(&self) -> Option<germanium_driver::MemberFilter> {
        if self.members.is_empty() {
            return None;
        }
        let mut set = globset::GlobSetBuilder::new();
        for glob in &self.members {
            set.add(glob.clone());
        }
        let set = set.build().ok()?;
        Some(germanium_driver::MemberFilter(std::sync::Arc::new(
            move |name: &str| set.is_match(name),
        )))
    }

    /// `--jobs`, or the number of CPUs.
    pub fn worker_count(&self) -> usize {
        jobs_or_cpus(self.jobs)
    }
}

/// `--jobs N`, or the number of CPUs.
fn jobs_or_cpus(jobs: Option<u16>) -> usize {
    match jobs {
        Some(jobs) => jobs.into(),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn options_are_parsed() {
        let cli = Cli::try_parse_from([
            "germanium",
            "check",
            "--format",
            "json",
            "--import-path",
            "a",
            "--import-path",
            "b",
            "--timeout",
            "5",
            "-j",
            "3",
            "x.vpr",
            "y.vpr",
        ])
        .unwrap();
        let (mode, args) = cli.command.mode_and_args().unwrap();
        assert_eq!(mode, Mode::Check);
        assert_eq!(args.format, Format::Json);
        assert_eq!(
            args.program.import_paths,
            [PathBuf::from("a"), PathBuf::from("b")]
        );
        assert_eq!(args.files.len(), 2);
        assert_eq!(args.jobs, Some(3));
        assert_eq!(
            args.options(mode).timeout,
            Some(std::time::Duration::from_secs(5))
        );
    }

    #[test]
    fn timeouts_are_positive_seconds_possibly_fractional() {
        let parse = |t: &str| Cli::try_parse_from(["germanium", "verify", "--timeout", t, "x.vpr"]);
        let cli = parse("1.5").unwrap();
        let (mode, args) = cli.command.mode_and_args().unwrap();
        assert_eq!(
            args.options(mode).timeout,
            Some(std::time::Duration::from_millis(1500))
        );
        for bad in ["0", "-1", "abc", "NaN", "inf"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn wands_are_standard_unless_asked() {
        let parse = |extra: &[&str]| {
            let cli = Cli::try_parse_from(
                ["germanium", "verify"]
                    .iter()
                    .chain(extra)
                    .chain(&["x.vpr"])
                    .copied(),
            )
            .unwrap();
            let (mode, args) = cli.command.mode_and_args().unwrap();
            args.options(mode).combinable_wands
        };
        assert!(!parse(&[]));
        assert!(parse(&["--combinable-wands"]));
    }

    #[test]
    fn debug_takes_one_file_and_a_port() {
        let cli = Cli::try_parse_from(["germanium", "debug", "--port", "9000", "x.vpr"]).unwrap();
        let Command::Debug(args) = cli.command else {
            panic!("not debug")
        };
        assert_eq!((args.port, args.file), (9000, PathBuf::from("x.vpr")));
        assert!(Cli::try_parse_from(["germanium", "debug", "x.vpr", "y.vpr"]).is_err());
    }

    #[test]
    fn member_patterns_are_globs() {
        let cli = Cli::try_parse_from([
            "germanium",
            "verify",
            "--member",
            "get_*",
            "--member",
            "main",
            "x.vpr",
        ])
        .unwrap();
        let (_, args) = cli.command.mode_and_args().unwrap();
        let keep = args.member_filter().unwrap();
        assert!((keep.0)("get_value") && (keep.0)("main"));
        assert!(!(keep.0)("set_value") && !(keep.0)("mains"));
        let none = Cli::try_parse_from(["germanium", "verify", "x.vpr"]).unwrap();
        assert!(none
            .command
            .mode_and_args()
            .unwrap()
            .1
            .member_filter()
            .is_none());
        assert!(Cli::try_parse_from(["germanium", "verify", "--member", "[", "x.vpr"]).is_err());
    }

    #[test]
    fn files_are_required_and_jobs_positive() {
        assert!(Cli::try_parse_from(["germanium", "verify"]).is_err());
        assert!(Cli::try_parse_from(["germanium", "verify", "-j", "0", "x.vpr"]).is_err());
    }
}
