//! A solver session: one Z3 process, its scope stack, and what is needed to rebuild it.
//!
//! The session runs Z3 with `:print-success`, so every command has exactly one answer and
//! answers are matched to commands one by one. Declarations are global
//! (`:global-declarations`): they survive `pop`, which lets a verifier declare fresh symbols
//! inside a branch. The session therefore keeps two things for replay: every declaration
//! and option (never popped), and the assertions of each open scope. After the process dies,
//! answers garbage or exceeds its wall-clock guard, the session reports an error and
//! [`Solver::restart`] starts a fresh process and replays that state.
//!
//! Query limits: the solver's own `:timeout`/`:rlimit` (set only when they change), plus a
//! wall-clock guard of timeout + grace on the reading side. (Writes are not guarded: a
//! process that stops reading its input while we send a command larger than the pipe
//! buffer would block us; Z3 reads between commands, so this needs a wedged Z3 *and* a huge
//! command.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::answers::{worth_keeping, KeyTracker};
use crate::command::{Command, SmtOption};
use crate::config::{locate_z3, Cancel, SolverConfig};
use crate::error::{excerpt, SolverError};
use crate::log::SmtLog;
use crate::model::{core_from_sexpr, values_from_sexpr, Model, Value};
use crate::process::{ReceiveError, Z3Process};
use crate::sexpr::{parse_one, SExpr};
use crate::sort::Sort;
use crate::symbol::Symbol;
use crate::term::{FunDecl, Term};

/// Commands sent in pipeline mode before their answers are read anyway.
const MAX_PENDING: usize = 256;

/// Z3's "no timeout" value for `:timeout` (milliseconds, an unsigned 32-bit number).
const NO_TIMEOUT_MS: u64 = u32::MAX as u64;

/// The answer to a satisfiability query.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SatResult {
    Sat,
    Unsat,
    /// The solver gave up; the reason is Z3's `:reason-unknown` (e.g. `timeout`,
    /// `canceled` for an exhausted resource limit, `(incomplete quantifiers)`).
    Unknown(String),
}

impl SatResult {
    pub fn is_sat(&self) -> bool {
        *self == SatResult::Sat
    }

    pub fn is_unsat(&self) -> bool {
        *self == SatResult::Unsat
    }

    /// Whether the solver gave up because of a limit: time, memory or resources.
    pub fn is_resource_out(&self) -> bool {
        self.reason_mentions(&["canceled", "resource"]) || self.is_machine_limit()
    }

    /// Whether the solver was stopped by a clock (Z3's `:timeout` or our wall clock), whose
    /// answer depends on how busy the machine was.
    pub fn is_clock_limit(&self) -> bool {
        self.reason_mentions(&["timeout"])
    }

    /// Whether the solver gave up because of a limit that depends on the machine (time or
    /// memory), unlike `:rlimit`, which counts work and is reached again by the same query.
    pub fn is_machine_limit(&self) -> bool {
        self.reason_mentions(&["timeout", "memout", "memory"])
    }

    fn reason_mentions(&self, words: &[&str]) -> bool {
        match self {
            SatResult::Unknown(reason) => {
                let reason = reason.to_ascii_lowercase();
                words.iter().any(|w| reason.contains(w))
            }
            _ => false,
        }
    }
}

/// Limits for one query. Unset fields fall back to the configuration's defaults.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct QueryLimits {
    /// Solver timeout (Z3 `:timeout`), guarded on our side by timeout + grace.
    pub timeout: Option<Duration>,
    /// Deterministic resource limit (Z3 `:rlimit`).
    pub rlimit: Option<u64>,
    /// A wall-clock limit kept on our side only (Z3's `:timeout` is then off: it runs a
    /// timer per query, about 0.1 ms each). When it passes, the process is killed and
    /// restarted in the state it had, and the answer is `unknown` for `timeout`.
    pub wall_clock: Option<Duration>,
    /// When Z3 gives up for incomplete quantifier instantiation (not for a limit), ask
    /// again, with a tenth of the resource limit ([`DEEP_SHARE`]), making delayed instances
    /// of any depth at final checks (see [`DEEP_LAZY_THRESHOLD`]). For validity queries,
    /// whose `unknown` is a failure; deterministic like every limit.
    pub deepen: bool,
}

/// Z3's `smt.qi.lazy_threshold` for a query asked again (see [`QueryLimits::deepen`]). Z3
/// delays an instance whose cost (its generation, about the depth of the instantiation
/// chain that made its terms) exceeds the eager threshold, and makes the delayed ones at a
/// final check only up to this cost (default 20): a chain such as `53 in s` through 640
/// set unions needs a generation of about 640. Asked only after a quick `unknown`, so
/// proofs that need no depth keep their cost and search, and a matching loop it lets run
/// still ends at the budget.
pub const DEEP_LAZY_THRESHOLD: u64 = 1000;

/// A deepened query gets this fraction of the query's resource limit: most quick
/// `unknown`s are failures, and a deeper search must not make each of them cost a budget.
pub const DEEP_SHARE: u64 = 10;

/// Z3's default `smt.qi.lazy_threshold`, restored after a deepened query.
const DEFAULT_LAZY_THRESHOLD: u64 = 20;

impl QueryLimits {
    pub fn timeout(timeout: Duration) -> QueryLimits {
        QueryLimits {
            timeout: Some(timeout),
            ..QueryLimits::default()
        }
    }
}

/// Counters for reporting and tuning.
#[derive(Clone, Default, Debug)]
pub struct SolverStats {
    /// Commands sent, queries included.
    pub commands: u64,
    pub queries: u64,
    /// Wall-clock time spent waiting for query answers.
    pub query_time: Duration,
    pub restarts: u32,
    /// Z3 resource units (the unit of `:rlimit`) the last query used; counted only when
    /// [`SolverConfig::measure_resources`] is on or a log is written.
    pub last_query_resources: Option<u64>,
    /// Queries answered from [`SolverConfig::answers`] without asking Z3 (not in `queries`).
    pub stored_answers: u64,
    /// Bytes of SMT-LIB text sent to Z3 (commands and their newlines).
    pub bytes_sent: u64,
    /// Resource units of all queries, counted like `last_query_resources`.
    pub resources: u64,
}

/// One Z3 process with a tracked scope stack. Not shared between threads; run one per
/// worker (it is `Send`).
pub struct Solver {
    config: SolverConfig,
    z3_path: PathBuf,
    process: Option<Z3Process>,
    log: Option<SmtLog>,
    /// Assertions per scope level; `frames[0]` is level 0 and always present. It also holds
    /// every declaration, definition and option, made at any level (they are never popped),
    /// in order with level 0's assertions: a raw datatype declaration must come before the
    /// functions over its sort, and a declaration made inside a scope before the level-0
    /// axioms that use it.
    frames: Vec<Vec<Command>>,
    /// `:timeout` and `:rlimit` currently set in the process.
    active_timeout_ms: u64,
    active_rlimit: u64,
    /// Z3's cumulative resource counter (`:rlimit` info) as last read.
    resources_read: u64,
    /// The replay state marked by [`Solver::checkpoint`]: the number of level-0 commands.
    checkpoint: Option<usize>,
    /// Commands sent whose `success` has not been read yet (see
    /// [`SolverConfig::pipeline`]).
    pending: Vec<Command>,
    sync_counter: u64,
    stats: SolverStats,
    /// Keys for [`SolverConfig::answers`], from the checkpoint on.
    keys: Option<KeyTracker>,
    /// The last query, when it was answered from the store: Z3 has not seen it, so it is
    /// asked for real before a model, values or a core of it are read.
    unasked: Option<(Command, QueryLimits)>,
}

impl Solver {
    /// Finds Z3 (see [`locate_z3`]), starts it and sends the preamble.
    pub fn new(config: SolverConfig) -> Result<Solver, SolverError> {
        let z3_path = locate_z3(config.z3.as_deref())?;
        let log = config.log.as_deref().map(SmtLog::create).transpose()?;
        let mut solver = Solver {
            config,
            z3_path,
            process: None,
            log,
            frames: vec![Vec::new()],
            active_timeout_ms: NO_TIMEOUT_MS,
            active_rlimit: 0,
            resources_read: 0,
            checkpoint: None,
            pending: Vec::new(),
            sync_counter: 0,
            stats: SolverStats::default(),
            keys: None,
            unasked: None,
        };
        solver.start()?;
        Ok(solver)
    }

    /// A second solver process in the state this one is in (every declaration, option and
    /// open scope replayed), without a log: queries asked there leave this one as it is.
    pub fn fork(&self) -> Result<Solver, SolverError> {
        let config = SolverConfig {
            log: None,
            answers: None,
            ..self.config.clone()
        };
        let mut other = Solver::new(config)?;
        other.frames = self.frames.clone();
        other.replay()?;
        Ok(other)
    }

    /// The Z3 executable in use.
    pub fn z3_path(&self) -> &Path {
        &self.z3_path
    }

    /// The operating-system id of the running process.
    pub fn process_id(&self) -> Option<u32> {
        self.process.as_ref().map(Z3Process::id)
    }

    pub fn is_running(&self) -> bool {
        self.process.is_some()
    }

    /// Number of open `push` scopes.
    pub fn scope_depth(&self) -> usize {
        self.frames.len() - 1
    }

    pub fn stats(&self) -> &SolverStats {
        &self.stats
    }

    fn start(&mut self) -> Result<(), SolverError> {
        if self
            .config
            .cancel
            .as_ref()
            .is_some_and(Cancel::is_cancelled)
        {
            return Err(SolverError::Cancelled {
                command: "(start)".into(),
            });
        }
        self.process = Some(Z3Process::spawn(&self.z3_path, &self.config.args)?);
        self.send_preamble()
    }

    /// Options for a fresh (or reset) process.
    fn send_preamble(&mut self) -> Result<(), SolverError> {
        self.active_timeout_ms = NO_TIMEOUT_MS;
        self.active_rlimit = 0;
        self.resources_read = 0;
        let mut preamble = vec![
            // First, so that every later command (this one included) answers.
            SmtOption::bool("print-success", true),
            SmtOption::bool("global-declarations", true),
        ];
        preamble.extend(self.config.options.iter().cloned());
        if let Some(mb) = self.config.memory_limit_mb {
            preamble.push(SmtOption::numeral("memory_max_size", mb));
        }
        if self.config.unsat_cores {
            preamble.push(SmtOption::bool("produce-unsat-cores", true));
        }
        for option in preamble {
            self.run(&Command::SetOption(option))?;
        }
        Ok(())
    }

    /// Kills the process (if any). The replay state is kept for [`Solver::restart`].
    pub fn stop(&mut self) {
        self.process = None; // Dropping kills and reaps.
        self.pending.clear();
    }

    /// Starts a fresh process and replays all declarations, options and the assertions of
    /// every open scope, so the new process is in the state the old one should have been.
    pub fn restart(&mut self) -> Result<(), SolverError> {
        self.stop();
        self.stats.restarts += 1;
        let depth = self.scope_depth();
        if let Some(log) = &mut self.log {
            log.comment(&format!(
                "restart {}: new Z3 process, replaying {} declarations and options, {} open scopes",
                self.stats.restarts,
                self.frames[0].len(),
                depth
            ))?;
            log.command(&Command::Reset.to_string())?;
        }
        self.start()?;
        self.replay()
    }

    /// Sends the replay state to a fresh (or reset) process: level 0 with every
    /// declaration, then each open scope.
    fn replay(&mut self) -> Result<(), SolverError> {
        let mut commands = self.frames[0].clone();
        for frame in self.frames.iter().skip(1) {
            commands.push(Command::Push(1));
            commands.extend(frame.iter().cloned());
        }
        self.run_pipelined(&commands)
    }

    /// Marks the current state (at scope level 0) for [`Solver::rewind`].
    pub fn checkpoint(&mut self) -> Result<(), SolverError> {
        if self.scope_depth() != 0 {
            return Err(SolverError::Usage(format!(
                "checkpoint with {} open scopes",
                self.scope_depth()
            )));
        }
        self.checkpoint = Some(self.frames[0].len());
        if self.config.answers.is_some() {
            let preamble: Vec<String> = self.frames[0].iter().map(Command::to_string).collect();
            let options = format!(
                "{:?} {:?} {:?} {}",
                self.config.args,
                self.config.options,
                self.config.memory_limit_mb,
                self.config.unsat_cores
            );
            self.keys = Some(KeyTracker::new(
                &options,
                preamble.iter().map(String::as_str),
            ));
        }
        Ok(())
    }

    /// Returns to the state of the last [`Solver::checkpoint`] as if nothing had happened
    /// since: `(reset)`, then the declarations, options and assertions made up to it. Unlike
    /// `pop`, this also drops what Z3 keeps across scopes (declarations, learned heuristics,
    /// random state), so what follows gets the same answers whatever ran before.
    pub fn rewind(&mut self) -> Result<(), SolverError> {
        let Some(level0) = self.checkpoint else {
            return Err(SolverError::Usage("rewind without a checkpoint".into()));
        };
        self.frames.truncate(1);
        self.frames[0].truncate(level0);
        if let Some(keys) = &mut self.keys {
            keys.rewind();
        }
        if self.process.is_none() {
            return self.restart();
        }
        self.run(&Command::Reset)?;
        self.send_preamble()?;
        self.replay()
    }

    /// Forgets all declarations, assertions and scopes (`(reset)`), keeping the process.
    pub fn reset(&mut self) -> Result<(), SolverError> {
        self.run(&Command::Reset)?;
        self.frames = vec![Vec::new()];
        self.checkpoint = None;
        self.keys = None;
        // `(reset)` also resets options.
        self.send_preamble()
    }

    /// Z3's version string, e.g. `4.15.4`.
    pub fn version(&mut self) -> Result<String, SolverError> {
        let command = Command::GetInfo("version".into());
        let expr = self.exchange_expr(&command)?;
        match expr.as_list() {
            Some([SExpr::Keyword(k), SExpr::String(version)]) if k == "version" => {
                Ok(version.clone())
            }
            _ => Err(self.protocol(&command, &expr.to_string())),
        }
    }

    // ----- declarations and assertions -----------------------------------------------------

    pub fn declare_sort(&mut self, name: &Symbol) -> Result<(), SolverError> {
        self.run_global(Command::DeclareSort(name.clone()))
    }

    pub fn declare_fun(&mut self, decl: &FunDecl) -> Result<(), SolverError> {
        self.run_global(Command::DeclareFun(decl.clone()))
    }

    pub fn define_fun(
        &mut self,
        name: &Symbol,
        params: Vec<(Symbol, Sort)>,
        result: Sort,
        body: Term,
    ) -> Result<(), SolverError> {
        self.run_global(Command::DefineFun {
            name: name.clone(),
            params,
            result,
            body,
        })
    }

    /// Sets an option for the rest of the session (kept for replay).
    pub fn set_option(&mut self, option: SmtOption) -> Result<(), SolverError> {
        self.run_global(Command::SetOption(option))
    }

    pub fn assert(&mut self, term: &Term) -> Result<(), SolverError> {
        self.run_scoped(Command::assert(term.clone()))
    }

    /// An assertion that can appear in an unsat core (needs `unsat_cores` in the config).
    pub fn assert_named(&mut self, term: &Term, name: &Symbol) -> Result<(), SolverError> {
        self.run_scoped(Command::Assert {
            term: term.clone(),
            name: Some(name.clone()),
        })
    }

    /// A raw command answering `success`. It is replayed as part of the current scope, so a
    /// raw declaration made inside a scope is not replayed once that scope is popped.
    pub fn raw(&mut self, text: &str) -> Result<(), SolverError> {
        self.run_scoped(Command::Raw(text.into()))
    }

    /// Writes a comment to the SMT log (if any).
    pub fn comment(&mut self, text: &str) -> Result<(), SolverError> {
        match &mut self.log {
            Some(log) => log.comment(text),
            None => Ok(()),
        }
    }

    fn run_global(&mut self, command: Command) -> Result<(), SolverError> {
        let text = command.to_string();
        self.run_printed(&command, &text)?;
        if let Some(keys) = &mut self.keys {
            match &command {
                Command::DeclareFun(decl) => keys.declared(decl.name().as_str(), &text),
                Command::DeclareSort(name) | Command::DefineFun { name, .. } => {
                    keys.declared(name.as_str(), &text)
                }
                _ => keys.lose_track(),
            }
        }
        self.frames[0].push(command);
        Ok(())
    }

    fn run_scoped(&mut self, command: Command) -> Result<(), SolverError> {
        let text = command.to_string();
        self.run_printed(&command, &text)?;
        if let Some(keys) = &mut self.keys {
            keys.scoped(&text);
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.push(command);
        }
        Ok(())
    }

    pub fn push(&mut self) -> Result<(), SolverError> {
        self.run(&Command::Push(1))?;
        if let Some(keys) = &mut self.keys {
            keys.push();
        }
        self.frames.push(Vec::new());
        Ok(())
    }

    /// Pops `n` scopes; popping more than [`Solver::scope_depth`] is an error and sends
    /// nothing.
    pub fn pop(&mut self, n: u32) -> Result<(), SolverError> {
        let n_scopes = n as usize;
        if n_scopes > self.scope_depth() {
            return Err(SolverError::Usage(format!(
                "pop {n} with only {} open scopes",
                self.scope_depth()
            )));
        }
        if n == 0 {
            return Ok(());
        }
        self.run(&Command::Pop(n))?;
        if let Some(keys) = &mut self.keys {
            keys.pop(n_scopes);
        }
        self.frames.truncate(self.frames.len() - n_scopes);
        Ok(())
    }

    // ----- queries ---------------------------------------------------------------------------

    pub fn check_sat(&mut self, limits: QueryLimits) -> Result<SatResult, SolverError> {
        self.query(Command::CheckSat, limits)
    }

    /// Checks satisfiability with `assumptions` added for this query only.
    pub fn check_sat_assuming(
        &mut self,
        assumptions: &[Term],
        limits: QueryLimits,
    ) -> Result<SatResult, SolverError> {
        self.query(Command::CheckSatAssuming(assumptions.to_vec()), limits)
    }

    /// Answers a query: from [`SolverConfig::answers`] when it holds the query's key (Z3 is
    /// then not asked), else from Z3, recording the answer when it is worth keeping.
    fn query(&mut self, command: Command, limits: QueryLimits) -> Result<SatResult, SolverError> {
        let Some(store) = self.config.answers.clone() else {
            return self.ask(command, limits);
        };
        let timeout = self.solver_timeout(&limits);
        let key = self
            .keys
            .as_mut()
            .and_then(|keys| keys.key(&command.to_string(), &format!("{limits:?} {timeout:?}")));
        let Some(key) = key else {
            return self.ask(command, limits);
        };
        if let Some(answer) = store.answer(&key) {
            self.stats.stored_answers += 1;
            self.stats.last_query_resources = Some(0);
            let said = match &answer {
                SatResult::Sat => "sat".to_string(),
                SatResult::Unsat => "unsat".to_string(),
                SatResult::Unknown(why) => format!("unknown ({why})"),
            };
            self.comment(&format!(
                "{command} answered {said} from the result cache, not sent"
            ))?;
            self.unasked = Some((command, limits));
            return Ok(answer);
        }
        let answer = self.ask(command, limits)?;
        // Without the solver's own timeout, only `:rlimit` (counting work) can stop Z3.
        if worth_keeping(&answer, timeout.is_none()) {
            store.record(key, &answer);
        }
        Ok(answer)
    }

    /// Asks Z3 (see [`Solver::query`]), once more with deeper instantiation when the
    /// limits say so and Z3 gave up for incomplete quantifier instantiation.
    fn ask(&mut self, command: Command, limits: QueryLimits) -> Result<SatResult, SolverError> {
        let answer = self.ask_once(command.clone(), limits)?;
        let incomplete =
            matches!(&answer, SatResult::Unknown(why) if why.contains("incomplete quantifiers"));
        if !(limits.deepen && incomplete) {
            return Ok(answer);
        }
        let lazy = |n| Command::SetOption(SmtOption::numeral("smt.qi.lazy_threshold", n));
        self.run(&lazy(DEEP_LAZY_THRESHOLD))?;
        let deeper = QueryLimits {
            rlimit: limits.rlimit.map(|r| (r / DEEP_SHARE).max(1)),
            ..limits
        };
        let again = self.ask_once(command, deeper);
        self.run(&lazy(DEFAULT_LAZY_THRESHOLD))?;
        again
    }

    /// Asks Z3 once (see [`Solver::ask`]).
    fn ask_once(
        &mut self,
        command: Command,
        limits: QueryLimits,
    ) -> Result<SatResult, SolverError> {
        self.unasked = None;
        let timeout = self.solver_timeout(&limits);
        let timeout_ms = timeout.map_or(NO_TIMEOUT_MS, |t| {
            (t.as_millis() as u64).clamp(1, NO_TIMEOUT_MS)
        });
        if timeout_ms != self.active_timeout_ms {
            self.run(&Command::SetOption(SmtOption::numeral(
                "timeout", timeout_ms,
            )))?;
            self.active_timeout_ms = timeout_ms;
        }
        let rlimit = limits.rlimit.unwrap_or(0);
        if rlimit != self.active_rlimit {
            self.run(&Command::SetOption(SmtOption::numeral("rlimit", rlimit)))?;
            self.active_rlimit = rlimit;
        }
        let guard = match (limits.wall_clock, timeout) {
            (Some(w), _) => Some(w),
            (None, Some(t)) => Some(t + self.config.guard_grace),
            (None, None) => self.config.untimed_query_guard,
        };
        self.stats.queries += 1;
        let started = Instant::now();
        let answer = self.exchange(&command, guard);
        let elapsed = started.elapsed();
        self.stats.query_time += elapsed;
        let out_of_memory = match &answer {
            Ok(text) => is_out_of_memory(text),
            // Z3 reports it on stderr and exits.
            Err(SolverError::Died { detail, .. }) => detail.contains("out of memory"),
            Err(_) => false,
        };
        if out_of_memory {
            // Z3 exits after this answer. The replay state is the one before the query, so
            // a fresh process continues exactly where this one was.
            let _ = self.comment("out of memory; restarting the process");
            self.restart()?;
            return Ok(SatResult::Unknown(crate::config::OUT_OF_MEMORY.into()));
        }
        if limits.wall_clock.is_some() && matches!(answer, Err(SolverError::Unresponsive { .. })) {
            // Killed at our wall clock: as if Z3 had timed out, in a fresh process.
            self.restart()?;
            return Ok(SatResult::Unknown("timeout (wall clock)".into()));
        }
        let answer = answer?;
        if self.active_rlimit != 0 {
            // Outside `check-sat`, Z3 compares its cumulative resource count with the
            // option's value itself, so commands such as `push` would be canceled once the
            // process as a whole has done that much work.
            self.run(&Command::SetOption(SmtOption::numeral("rlimit", 0)))?;
            self.active_rlimit = 0;
        }
        self.stats.last_query_resources = None;
        if self.config.measure_resources || self.log.is_some() {
            let used = self.resources_used()?;
            self.stats.last_query_resources = Some(used);
            self.stats.resources += used;
        }
        if let Some(log) = &mut self.log {
            let used = self.stats.last_query_resources.unwrap_or_default();
            log.comment(&format!(
                "{:.3}s, {used} resource units",
                elapsed.as_secs_f64()
            ))?;
            log.flush()?;
        }
        match answer.as_str() {
            "sat" => Ok(SatResult::Sat),
            "unsat" => Ok(SatResult::Unsat),
            "unknown" => Ok(SatResult::Unknown(self.reason_unknown()?)),
            _ => Err(self.unexpected(&command, &answer)),
        }
    }

    /// The resource units used since the last reading (Z3's counter is cumulative; the
    /// `:rlimit` option bounds each query on its own).
    fn resources_used(&mut self) -> Result<u64, SolverError> {
        let command = Command::GetInfo("rlimit".into());
        let expr = self.exchange_expr(&command)?;
        let total = match expr.as_list() {
            Some([SExpr::Keyword(k), SExpr::Numeral(n)]) if k == "rlimit" => n.parse::<u64>().ok(),
            _ => None,
        };
        let Some(total) = total else {
            return Err(self.protocol(&command, &expr.to_string()));
        };
        let used = total.saturating_sub(self.resources_read);
        self.resources_read = total;
        Ok(used)
    }

    fn reason_unknown(&mut self) -> Result<String, SolverError> {
        let command = Command::GetInfo("reason-unknown".into());
        let answer = self.exchange(&command, Some(self.config.command_guard))?;
        let parsed = parse_one(&answer).ok();
        match parsed.as_ref().and_then(SExpr::as_list) {
            Some([SExpr::Keyword(k), value]) if k == "reason-unknown" => Ok(match value {
                SExpr::String(s) | SExpr::Symbol(s) => s.clone(),
                other => other.to_string(),
            }),
            _ => Err(self.unexpected(&command, &answer)),
        }
    }

    /// The model of the last `sat` (or `unknown`) answer.
    pub fn get_model(&mut self) -> Result<Model, SolverError> {
        self.ask_unasked()?;
        let command = Command::GetModel;
        let expr = self.exchange_expr(&command)?;
        Model::from_sexpr(&expr).map_err(|why| self.protocol(&command, &why))
    }

    /// Values of `terms` in the model of the last `sat` answer, in order.
    pub fn get_value(&mut self, terms: &[Term]) -> Result<Vec<Value>, SolverError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        self.ask_unasked()?;
        let command = Command::GetValue(terms.to_vec());
        let expr = self.exchange_expr(&command)?;
        values_from_sexpr(&expr, terms.len()).map_err(|why| self.protocol(&command, &why))
    }

    /// Names of the named assertions in the unsat core of the last `unsat` answer.
    pub fn get_unsat_core(&mut self) -> Result<Vec<Symbol>, SolverError> {
        self.ask_unasked()?;
        let command = Command::GetUnsatCore;
        let expr = self.exchange_expr(&command)?;
        core_from_sexpr(&expr).map_err(|why| self.protocol(&command, &why))
    }

    /// The timeout Z3 itself gets for a query (`:timeout`): none with a wall clock kept on
    /// our side.
    fn solver_timeout(&self, limits: &QueryLimits) -> Option<Duration> {
        match limits.wall_clock {
            Some(_) => None,
            None => limits.timeout.or(self.config.default_timeout),
        }
    }

    /// Asks Z3 the last query if it was answered from the store, so that what is read
    /// next belongs to it.
    fn ask_unasked(&mut self) -> Result<(), SolverError> {
        match self.unasked.take() {
            Some((command, limits)) => self.ask(command, limits).map(|_| ()),
            None => Ok(()),
        }
    }

    // ----- the conversation --------------------------------------------------------------------

    /// Sends a command that answers `success`.
    fn run(&mut self, command: &Command) -> Result<(), SolverError> {
        self.run_printed(command, &command.to_string())
    }

    /// [`Solver::run`] for a command already printed as `text`. Any such command changes
    /// the state a stored answer was for: what is read afterwards is not about it.
    fn run_printed(&mut self, command: &Command, text: &str) -> Result<(), SolverError> {
        self.unasked = None;
        if self.config.pipeline {
            self.send_text(text, false)?;
            self.pending.push(command.clone());
            if self.pending.len() >= MAX_PENDING {
                self.drain()?;
            }
            return Ok(());
        }
        let answer = self.exchange_printed(text, Some(self.config.command_guard))?;
        if answer == "success" {
            Ok(())
        } else {
            Err(self.unexpected(command, &answer))
        }
    }

    /// Sends a command whose answer is an s-expression (not `success`).
    fn exchange_expr(&mut self, command: &Command) -> Result<SExpr, SolverError> {
        let answer = self.exchange(command, Some(self.config.command_guard))?;
        if answer.starts_with("(error") {
            return Err(self.unexpected(command, &answer));
        }
        parse_one(&answer).map_err(|e| self.protocol(command, &format!("{e}: {answer}")))
    }

    /// Sends commands that answer `success` without waiting for each answer, then reads
    /// the answers: one round trip for the lot (replaying a preamble is hundreds of
    /// commands).
    fn run_pipelined(&mut self, commands: &[Command]) -> Result<(), SolverError> {
        self.drain()?;
        let texts: Vec<String> = commands.iter().map(Command::to_string).collect();
        for text in &texts {
            self.send_text(text, false)?;
        }
        self.flush_input(texts.last().map_or("", String::as_str))?;
        for (command, text) in commands.iter().zip(&texts) {
            let answer = self.receive_answer(text, Some(self.config.command_guard))?;
            if answer != "success" {
                return Err(self.unexpected(command, &answer));
            }
        }
        Ok(())
    }

    /// Reads the `success` answers of the commands sent without waiting. An error answer
    /// is reported for the command it belongs to.
    fn drain(&mut self) -> Result<(), SolverError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        self.flush_input(&pending[pending.len() - 1].to_string())?;
        for command in &pending {
            let answer =
                self.receive_answer(&command.to_string(), Some(self.config.command_guard))?;
            if answer != "success" {
                // Resynchronising skips the answers still due for the rest of `pending`.
                return Err(self.unexpected(command, &answer));
            }
        }
        Ok(())
    }

    /// Sends one command and waits for one answer.
    fn exchange(
        &mut self,
        command: &Command,
        guard: Option<Duration>,
    ) -> Result<String, SolverError> {
        self.exchange_printed(&command.to_string(), guard)
    }

    /// [`Solver::exchange`] for a command already printed as `text`.
    fn exchange_printed(
        &mut self,
        text: &str,
        guard: Option<Duration>,
    ) -> Result<String, SolverError> {
        self.drain()?;
        self.send_text(text, true)?;
        self.receive_answer(text, guard)
    }

    /// Logs and sends one command (`flush`: now; otherwise with the next flush).
    fn send_text(&mut self, text: &str, flush: bool) -> Result<(), SolverError> {
        if let Some(log) = &mut self.log {
            log.command(text)?;
        }
        let process = self.process.as_mut().ok_or(SolverError::NotRunning)?;
        self.stats.commands += 1;
        self.stats.bytes_sent += text.len() as u64 + 1;
        let sent = if flush {
            process.send(text)
        } else {
            process.send_buffered(text)
        };
        match sent {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(text, e)),
        }
    }

    fn flush_input(&mut self, last: &str) -> Result<(), SolverError> {
        let process = self.process.as_mut().ok_or(SolverError::NotRunning)?;
        match process.flush() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(last, e)),
        }
    }

    fn write_failed(&mut self, text: &str, e: std::io::Error) -> SolverError {
        let detail = match self.process.as_mut() {
            Some(process) => format!("cannot write to Z3 ({e}); {}", process.exit_detail()),
            None => format!("cannot write to Z3 ({e})"),
        };
        self.process = None;
        let _ = self.comment(&format!("no answer, process stopped: {detail}"));
        SolverError::Died {
            command: excerpt(text),
            detail,
        }
    }

    /// Waits for the answer to the command `text` (already sent).
    fn receive_answer(
        &mut self,
        text: &str,
        guard: Option<Duration>,
    ) -> Result<String, SolverError> {
        let process = self.process.as_mut().ok_or(SolverError::NotRunning)?;
        match process.receive(guard, self.config.cancel.as_ref()) {
            Ok(answer) => {
                if answer != "success" {
                    if let Some(log) = &mut self.log {
                        log.comment(&answer)?;
                    }
                }
                Ok(answer)
            }
            Err(ReceiveError::Cancelled) => {
                self.process = None;
                let _ = self.comment("cancelled, process killed");
                Err(SolverError::Cancelled {
                    command: excerpt(text),
                })
            }
            Err(ReceiveError::Timeout) => {
                self.process = None;
                let waited = guard.unwrap_or_default();
                let _ = self.comment(&format!("no answer within {waited:?}, process killed"));
                Err(SolverError::Unresponsive {
                    command: excerpt(text),
                    waited,
                })
            }
            Err(ReceiveError::Closed(why)) => {
                let detail = format!("{why}; {}", process.exit_detail());
                self.process = None;
                let _ = self.comment(&format!("no answer, process stopped: {detail}"));
                Err(SolverError::Died {
                    command: excerpt(text),
                    detail,
                })
            }
        }
    }

    /// Classifies an answer that does not fit `command`: Z3's `(error "...")` leaves the
    /// process usable (after resynchronising); anything else kills it.
    fn unexpected(&mut self, command: &Command, answer: &str) -> SolverError {
        let message = parse_one(answer)
            .ok()
            .and_then(|expr| match expr.as_list() {
                Some([head, SExpr::String(message)]) if head.is_symbol("error") => {
                    Some(message.clone())
                }
                _ => None,
            });
        match message {
            Some(message) => match self.resynchronise() {
                Ok(()) => SolverError::Rejected {
                    command: excerpt(&command.to_string()),
                    message,
                },
                Err(e) => e,
            },
            None => self.protocol(command, answer),
        }
    }

    fn protocol(&mut self, command: &Command, answer: &str) -> SolverError {
        self.process = None;
        let _ = self.comment("unexpected answer; process killed");
        SolverError::Protocol {
            command: excerpt(&command.to_string()),
            answer: excerpt(answer),
        }
    }

    /// After an error answer, Z3 may print further error lines for the same command. Echo a
    /// marker and skip everything before it, so the next answer belongs to the next command.
    fn resynchronise(&mut self) -> Result<(), SolverError> {
        self.sync_counter += 1;
        let marker = format!("germanium-sync-{}", self.sync_counter);
        let command = Command::Raw(format!("(echo \"{marker}\")").into());
        let mut answer = self.exchange(&command, Some(self.config.command_guard))?;
        for _ in 0..100 {
            if answer == marker || answer == format!("\"{marker}\"") {
                return Ok(());
            }
            let process = self.process.as_mut().ok_or(SolverError::NotRunning)?;
            answer = match process.receive(Some(self.config.command_guard), None) {
                Ok(next) => next,
                Err(_) => break,
            };
        }
        Err(self.protocol(&command, &answer))
    }
}

/// Whether `answer` is Z3's report that it reached its memory limit.
fn is_out_of_memory(answer: &str) -> bool {
    answer.starts_with("(error") && answer.contains("out of memory")
}

impl Drop for Solver {
    fn drop(&mut self) {
        if let Some(log) = &mut self.log {
            let _ = log.flush();
        }
    }
}
