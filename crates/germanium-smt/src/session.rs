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

use crate::command::{Command, SmtOption};
use crate::config::{locate_z3, SolverConfig};
use crate::error::{excerpt, SolverError};
use crate::log::SmtLog;
use crate::model::{core_from_sexpr, values_from_sexpr, Model, Value};
use crate::process::{ReceiveError, Z3Process};
use crate::sexpr::{parse_one, SExpr};
use crate::sort::Sort;
use crate::symbol::Symbol;
use crate::term::{FunDecl, Term};

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

    /// Whether the solver gave up because of a time or resource limit.
    pub fn is_resource_out(&self) -> bool {
        match self {
            SatResult::Unknown(reason) => {
                let reason = reason.to_ascii_lowercase();
                ["timeout", "canceled", "resource", "memout", "max. memory"]
                    .iter()
                    .any(|w| reason.contains(w))
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
}

impl QueryLimits {
    pub fn timeout(timeout: Duration) -> QueryLimits {
        QueryLimits {
            timeout: Some(timeout),
            rlimit: None,
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
}

/// One Z3 process with a tracked scope stack. Not shared between threads; run one per
/// worker (it is `Send`).
pub struct Solver {
    config: SolverConfig,
    z3_path: PathBuf,
    process: Option<Z3Process>,
    log: Option<SmtLog>,
    /// Declarations, definitions and options so far, in order; never popped.
    globals: Vec<Command>,
    /// Assertions per scope level; `frames[0]` is level 0 and always present.
    frames: Vec<Vec<Command>>,
    /// `:timeout` and `:rlimit` currently set in the process.
    active_timeout_ms: u64,
    active_rlimit: u64,
    sync_counter: u64,
    stats: SolverStats,
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
            globals: Vec::new(),
            frames: vec![Vec::new()],
            active_timeout_ms: NO_TIMEOUT_MS,
            active_rlimit: 0,
            sync_counter: 0,
            stats: SolverStats::default(),
        };
        solver.start()?;
        Ok(solver)
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
        self.process = Some(Z3Process::spawn(&self.z3_path, &self.config.args)?);
        self.send_preamble()
    }

    /// Options for a fresh (or reset) process.
    fn send_preamble(&mut self) -> Result<(), SolverError> {
        self.active_timeout_ms = NO_TIMEOUT_MS;
        self.active_rlimit = 0;
        let mut preamble = vec![
            // First, so that every later command (this one included) answers.
            SmtOption::bool("print-success", true),
            SmtOption::bool("global-declarations", true),
        ];
        preamble.extend(self.config.options.iter().cloned());
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
                self.globals.len(),
                depth
            ))?;
            log.command(&Command::Reset.to_string())?;
        }
        self.start()?;
        for command in self.globals.clone() {
            self.run(&command)?;
        }
        for (level, frame) in self.frames.clone().iter().enumerate() {
            if level > 0 {
                self.run(&Command::Push(1))?;
            }
            for command in frame {
                self.run(command)?;
            }
        }
        Ok(())
    }

    /// Forgets all declarations, assertions and scopes (`(reset)`), keeping the process.
    pub fn reset(&mut self) -> Result<(), SolverError> {
        self.run(&Command::Reset)?;
        self.globals.clear();
        self.frames = vec![Vec::new()];
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
        self.run(&command)?;
        self.globals.push(command);
        Ok(())
    }

    fn run_scoped(&mut self, command: Command) -> Result<(), SolverError> {
        self.run(&command)?;
        if let Some(frame) = self.frames.last_mut() {
            frame.push(command);
        }
        Ok(())
    }

    pub fn push(&mut self) -> Result<(), SolverError> {
        self.run(&Command::Push(1))?;
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

    fn query(&mut self, command: Command, limits: QueryLimits) -> Result<SatResult, SolverError> {
        let timeout = limits.timeout.or(self.config.default_timeout);
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
        let guard = match timeout {
            Some(t) => Some(t + self.config.guard_grace),
            None => self.config.untimed_query_guard,
        };
        self.stats.queries += 1;
        let started = Instant::now();
        let answer = self.exchange(&command, guard);
        self.stats.query_time += started.elapsed();
        if let Some(log) = &mut self.log {
            log.comment(&format!("{:.3}s", started.elapsed().as_secs_f64()))?;
            log.flush()?;
        }
        let answer = answer?;
        match answer.as_str() {
            "sat" => Ok(SatResult::Sat),
            "unsat" => Ok(SatResult::Unsat),
            "unknown" => Ok(SatResult::Unknown(self.reason_unknown()?)),
            _ => Err(self.unexpected(&command, &answer)),
        }
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
        let command = Command::GetModel;
        let expr = self.exchange_expr(&command)?;
        Model::from_sexpr(&expr).map_err(|why| self.protocol(&command, &why))
    }

    /// Values of `terms` in the model of the last `sat` answer, in order.
    pub fn get_value(&mut self, terms: &[Term]) -> Result<Vec<Value>, SolverError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let command = Command::GetValue(terms.to_vec());
        let expr = self.exchange_expr(&command)?;
        values_from_sexpr(&expr, terms.len()).map_err(|why| self.protocol(&command, &why))
    }

    /// Names of the named assertions in the unsat core of the last `unsat` answer.
    pub fn get_unsat_core(&mut self) -> Result<Vec<Symbol>, SolverError> {
        let command = Command::GetUnsatCore;
        let expr = self.exchange_expr(&command)?;
        core_from_sexpr(&expr).map_err(|why| self.protocol(&command, &why))
    }

    // ----- the conversation --------------------------------------------------------------------

    /// Sends a command that answers `success`.
    fn run(&mut self, command: &Command) -> Result<(), SolverError> {
        let answer = self.exchange(command, Some(self.config.command_guard))?;
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

    /// Sends one command and waits for one answer.
    fn exchange(
        &mut self,
        command: &Command,
        guard: Option<Duration>,
    ) -> Result<String, SolverError> {
        let text = command.to_string();
        if let Some(log) = &mut self.log {
            log.command(&text)?;
        }
        let process = self.process.as_mut().ok_or(SolverError::NotRunning)?;
        self.stats.commands += 1;
        if let Err(e) = process.send(&text) {
            let detail = format!("cannot write to Z3 ({e}); {}", process.exit_detail());
            self.process = None;
            let _ = self.comment(&format!("no answer, process stopped: {detail}"));
            return Err(SolverError::Died {
                command: excerpt(&text),
                detail,
            });
        }
        match process.receive(guard) {
            Ok(answer) => {
                if answer != "success" {
                    if let Some(log) = &mut self.log {
                        log.comment(&answer)?;
                    }
                }
                Ok(answer)
            }
            Err(ReceiveError::Timeout) => {
                self.process = None;
                let waited = guard.unwrap_or_default();
                let _ = self.comment(&format!("no answer within {waited:?}, process killed"));
                Err(SolverError::Unresponsive {
                    command: excerpt(&text),
                    waited,
                })
            }
            Err(ReceiveError::Closed(why)) => {
                let detail = format!("{why}; {}", process.exit_detail());
                self.process = None;
                let _ = self.comment(&format!("no answer, process stopped: {detail}"));
                Err(SolverError::Died {
                    command: excerpt(&text),
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
            answer = match process.receive(Some(self.config.command_guard)) {
                Ok(next) => next,
                Err(_) => break,
            };
        }
        Err(self.protocol(&command, &answer))
    }
}

impl Drop for Solver {
    fn drop(&mut self) {
        if let Some(log) = &mut self.log {
            let _ = log.flush();
        }
    }
}
