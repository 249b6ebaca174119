//! Verification on a Remote Execution API cluster (`germanium-remote`): each member to verify
//! has an action over its dependency slice (`germanium_cache::Slice`), looked up in the
//! cluster's action cache by a digest of everything it depends on, and executed there when
//! missing (`members.rs`). Large members are executed as their own action; small ones are
//! verified together in one run of the whole program (a batch), and each one's result is
//! stored back under its own action, so per-member sharing survives batching, as the local
//! cache stores results of whole-program runs under keys of what each member depends on.
//!
//! A member's slice is verified as the member would be in the program: a function's slice
//! leaves the other functions without bodies, and those are passed as untrusted (no
//! postcondition is trusted while functions are verified); another member's job passes the
//! functions that failed in the program. `run_jobs` (`jobs.rs`) is what `germanium action`
//! runs on the worker, and what runs here when the cluster has no executor (a cache only,
//! whose results are then stored there) or cannot be reached with `--remote-fallback local`.

mod jobs;
mod members;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use germanium_remote::{Remote, RemoteError, RemoteSettings, Tools};
use germanium_verifier::VerifyOptions;

pub use germanium_remote::JobInput as Job;
pub use jobs::{run_action, run_jobs, slice_job};
pub(crate) use members::RemoteMembers;

/// `--remote-executor` and friends, with the connection made once per process.
#[derive(Clone)]
pub struct RemoteOptions {
    pub settings: RemoteSettings,
    /// The Germanium executable the actions run (this one, normally).
    pub germanium: PathBuf,
    /// Verify here what the cluster cannot (`--remote-fallback local`).
    pub fallback_local: bool,
    connection: Arc<OnceLock<Result<Arc<Connection>, RemoteError>>>,
}

impl std::fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("settings", &self.settings)
            .field("germanium", &self.germanium)
            .field("fallback_local", &self.fallback_local)
            .finish()
    }
}

struct Connection {
    remote: Remote,
    tools: Tools,
}

impl RemoteOptions {
    pub fn new(settings: RemoteSettings, germanium: PathBuf, fallback_local: bool) -> Self {
        RemoteOptions {
            settings,
            germanium,
            fallback_local,
            connection: Arc::new(OnceLock::new()),
        }
    }

    /// The connection and the tools, made on first use; the same error for every file after
    /// a failure (the cluster is not asked again within one run).
    fn connection(&self, z3: &Path) -> Result<Arc<Connection>, RemoteError> {
        self.connection
            .get_or_init(|| {
                let tools = Tools::load(&self.germanium, z3)
                    .map_err(|e| RemoteError::Settings(format!("reading the tools: {e}")))?;
                let remote = Remote::connect(&self.settings)?;
                Ok(Arc::new(Connection { remote, tools }))
            })
            .clone()
    }
}

/// The command-line options of `germanium action` that carry `options` (those that change
/// results; the rest, such as `--jobs`, stay on the client).
pub(crate) fn action_args(
    options: &VerifyOptions,
    engine: &crate::backends::Engine,
) -> Vec<String> {
    let mut args = vec!["--backend".to_string(), engine.backend.name().to_string()];
    if engine.cross_check {
        args.push("--cross-check".into());
    }
    if options.combinable_wands {
        args.push("--combinable-wands".into());
    }
    if let Some(t) = options.timeout {
        args.extend(["--timeout".into(), format!("{}", t.as_secs_f64())]);
    }
    if let Some(n) = options.max_branches {
        args.extend(["--max-branches".into(), n.to_string()]);
    }
    args
}
