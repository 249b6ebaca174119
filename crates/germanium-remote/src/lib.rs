//! Members as actions on a Remote Execution API (REAPI) cluster.
//!
//! A member's verification is a hermetic action: its inputs are the Germanium binary, Z3,
//! the member's dependency slice (`germanium_cache::Slice`) and a manifest naming the member
//! and the functions not to trust; its output is `results.json`. This crate builds such
//! actions ([`action`]), and speaks REAPI ([`Remote`]): it uploads what the CAS lacks, looks
//! actions up in the action cache, executes the misses and reads their results back. The
//! driver decides which members become which actions (`germanium-driver`'s `remote.rs`).
//!
//! Architecture invariant: the only crate with an async runtime; its API blocks, so
//! nothing else needs tokio. No call waits without a deadline or a cancel flag.

pub mod action;
mod client;
pub mod digest;
mod endpoint;
pub mod protocol;

use std::sync::Arc;
use std::time::Duration;

pub use bazel_remote_apis::build::bazel::remote::execution::v2::Digest;
use bazel_remote_apis::build::bazel::remote::execution::v2::{ActionResult, OutputFile};
use futures::StreamExt;

pub use action::{prepare, JobInput, PreparedAction, Tools};
pub use client::CancelFlag;
use client::Client;
pub use digest::Blob;
pub use endpoint::EndpointSettings;

/// Why a remote operation did not give a result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// The settings cannot work (a bad address, a missing certificate).
    #[error("remote settings: {0}")]
    Settings(String),
    /// The server cannot be reached.
    #[error("the remote cluster cannot be reached: {0}")]
    Unreachable(String),
    /// The server answered with an error.
    #[error("the remote cluster failed: {0}")]
    Server(String),
    /// The action ran and did not give a result (a crash, an unreadable output).
    #[error("the remote action failed: {0}")]
    Action(String),
    #[error("the run was cancelled")]
    Cancelled,
}

impl RemoteError {
    fn from_status(what: &str, url: &str, status: &tonic::Status) -> RemoteError {
        let text = format!("{url}: {what}: {} ({:?})", status.message(), status.code());
        match status.code() {
            tonic::Code::Unavailable | tonic::Code::DeadlineExceeded => {
                RemoteError::Unreachable(text)
            }
            _ => RemoteError::Server(text),
        }
    }

    /// Whether the cluster could not be reached (so a local run may stand in for it).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, RemoteError::Unreachable(_))
    }
}

/// Where the cluster is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoteSettings {
    /// The execution service (`--remote-executor`); `None`: a cache only.
    pub executor: Option<EndpointSettings>,
    /// The CAS and action cache (`--remote-cache`; `None`: the executor's).
    pub cache: Option<EndpointSettings>,
    /// `--remote-instance`.
    pub instance: String,
    /// Extra request headers (`--remote-header NAME=VALUE`), such as an API key.
    pub headers: Vec<(String, String)>,
    /// An action's time limit on the worker.
    pub action_timeout: Duration,
}

/// How an executed action's result came to be.
#[derive(Clone, Debug)]
pub struct Executed {
    /// `results.json`.
    pub output: Vec<u8>,
    /// The server found it in its action cache.
    pub cached: bool,
}

/// A connection to a cluster, with the runtime its calls run on.
pub struct Remote {
    runtime: tokio::runtime::Runtime,
    client: Arc<Client>,
}

/// Execution attempts of an action whose worker failed (died, timed out, lost an input).
const EXECUTION_ATTEMPTS: u32 = 3;
/// Actions in flight at once.
const IN_FLIGHT: usize = 64;

impl Remote {
    /// Connects and asks the servers' capabilities: an error says which cannot be reached.
    pub fn connect(settings: &RemoteSettings) -> Result<Remote, RemoteError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("germanium-remote")
            .enable_all()
            .build()
            .map_err(|e| RemoteError::Settings(format!("cannot start the client runtime: {e}")))?;
        let storage_settings = settings
            .cache
            .as_ref()
            .or(settings.executor.as_ref())
            .ok_or_else(|| {
                RemoteError::Settings("neither an executor nor a cache is set".into())
            })?;
        let client = {
            let _enter = runtime.enter();
            let storage = (storage_settings.channel()?, storage_settings.url.clone());
            let execution = match &settings.executor {
                Some(e) => Some((e.channel()?, e.url.clone())),
                None => None,
            };
            Client::new(
                settings.instance.clone(),
                &settings.headers,
                storage,
                execution,
            )?
        };
        runtime.block_on(async {
            client
                .capabilities(&client.storage, &client.storage_url)
                .await?;
            if let Some((channel, url)) = &client.execution {
                if url != &client.storage_url {
                    client.capabilities(channel, url).await?;
                }
            }
            Ok::<(), RemoteError>(())
        })?;
        Ok(Remote {
            runtime,
            client: Arc::new(client),
        })
    }

    /// Whether actions can be executed here (else: a cache only).
    pub fn executes(&self) -> bool {
        self.client.execution.is_some()
    }

    /// The results of `actions` in the action cache, in their order (`None`: a miss; a
    /// stored result that cannot be read is a miss too).
    pub fn lookup_all(&self, actions: &[Digest]) -> Result<Vec<Option<Vec<u8>>>, RemoteError> {
        let client = self.client.clone();
        self.runtime.block_on(async move {
            let lookups = actions.iter().map(|a| {
                let client = client.clone();
                async move {
                    match client.lookup(a).await? {
                        Some(result) => Ok(read_results(&client, &result).await.ok()),
                        None => Ok(None),
                    }
                }
            });
            futures::stream::iter(lookups)
                .buffered(IN_FLIGHT)
                .collect::<Vec<Result<_, RemoteError>>>()
                .await
                .into_iter()
                .collect()
        })
    }

    /// Uploads what `actions` need and executes them, slowest expected first (the caller's
    /// order), each retried when its worker fails; the results in the actions' order.
    pub fn execute_all(
        &self,
        actions: &[PreparedAction],
        cancelled: CancelFlag,
    ) -> Vec<Result<Executed, RemoteError>> {
        let client = self.client.clone();
        self.runtime.block_on(async move {
            let blobs: Vec<Blob> = actions.iter().flat_map(|a| a.blobs.clone()).collect();
            if let Err(e) = client.upload(&blobs).await {
                return actions.iter().map(|_| Err(e.clone())).collect();
            }
            let runs = actions.iter().map(|a| {
                let client = client.clone();
                let cancelled = cancelled.clone();
                async move { execute_one(&client, a, &cancelled).await }
            });
            futures::stream::iter(runs)
                .buffered(IN_FLIGHT)
                .collect::<Vec<_>>()
                .await
        })
    }

    /// Stores `output` as the result of `action` (run elsewhere: locally, or in a batch),
    /// for the next client to find.
    pub fn store_all(&self, entries: &[(&PreparedAction, Vec<u8>)]) -> Result<(), RemoteError> {
        let client = self.client.clone();
        self.runtime.block_on(async move {
            let outputs: Vec<Blob> = entries.iter().map(|(_, o)| Blob::new(o.clone())).collect();
            let mut needed: Vec<Blob> = entries.iter().flat_map(|(a, _)| a.blobs.clone()).collect();
            needed.extend(outputs.iter().cloned());
            client.upload(&needed).await?;
            for ((action, _), output) in entries.iter().zip(outputs) {
                let result = ActionResult {
                    output_files: vec![OutputFile {
                        path: protocol::RESULTS.into(),
                        digest: Some(output.digest.clone()),
                        is_executable: false,
                        contents: Vec::new(),
                        node_properties: None,
                    }],
                    exit_code: 0,
                    ..ActionResult::default()
                };
                client.store(&action.digest, &result).await?;
            }
            Ok(())
        })
    }
}

async fn read_results(client: &Client, result: &ActionResult) -> Result<Vec<u8>, RemoteError> {
    let file = result
        .output_files
        .iter()
        .find(|f| f.path == protocol::RESULTS)
        .ok_or_else(|| RemoteError::Action(format!("the action left no {}", protocol::RESULTS)))?;
    if !file.contents.is_empty() {
        return Ok(file.contents.clone());
    }
    let digest = file
        .digest
        .as_ref()
        .ok_or_else(|| RemoteError::Action("an output without a digest".into()))?;
    client.read(digest).await
}

async fn execute_one(
    client: &Client,
    action: &PreparedAction,
    cancelled: &CancelFlag,
) -> Result<Executed, RemoteError> {
    let mut last = None;
    for _ in 0..EXECUTION_ATTEMPTS {
        let response = client.execute(&action.digest, cancelled).await?;
        let status = response.status.clone().unwrap_or_default();
        if status.code == tonic::Code::FailedPrecondition as i32 {
            // An input went missing from the CAS (evicted): upload again.
            client.upload(&action.blobs).await?;
            last = Some(format!("missing inputs: {}", status.message));
            continue;
        }
        if status.code != 0 {
            // The worker died, timed out or was lost: the same action again.
            last = Some(format!(
                "{} ({:?})",
                status.message,
                tonic::Code::from_i32(status.code)
            ));
            continue;
        }
        let Some(result) = response.result else {
            last = Some("no result".into());
            continue;
        };
        if result.exit_code != 0 && result.exit_code != protocol::TRANSIENT_EXIT {
            let stderr = match &result.stderr_digest {
                Some(d) => client.read(d).await.unwrap_or_default(),
                None => result.stderr_raw.clone(),
            };
            let stderr = String::from_utf8_lossy(&stderr);
            let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
            let why = format!("exit code {}: {tail}", result.exit_code);
            if result.exit_code > 128 {
                // Killed by a signal: perhaps the worker's machine, not the action.
                last = Some(why);
                continue;
            }
            return Err(RemoteError::Action(why));
        }
        return Ok(Executed {
            output: read_results(client, &result).await?,
            cached: response.cached_result,
        });
    }
    Err(RemoteError::Action(format!(
        "action {} failed {EXECUTION_ATTEMPTS} times: {}",
        digest::show(&action.digest),
        last.unwrap_or_default()
    )))
}
