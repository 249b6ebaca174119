//! The REAPI calls, asynchronous: capabilities, the CAS (missing blobs, batch and
//! ByteStream uploads and reads), the action cache, and execution with its operation
//! stream, reconnection and cancellation. Every call carries the instance name and the
//! extra headers, every unary call a deadline, and transient failures are retried a few
//! times with backoff before they become an error naming the server.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bazel_remote_apis::build::bazel::remote::execution::v2::{
    action_cache_client::ActionCacheClient, batch_update_blobs_request,
    capabilities_client::CapabilitiesClient,
    content_addressable_storage_client::ContentAddressableStorageClient,
    execution_client::ExecutionClient, ActionResult, BatchReadBlobsRequest,
    BatchUpdateBlobsRequest, Digest, ExecuteRequest, ExecuteResponse, FindMissingBlobsRequest,
    GetActionResultRequest, GetCapabilitiesRequest, ServerCapabilities, UpdateActionResultRequest,
    WaitExecutionRequest,
};
use bazel_remote_apis::google::bytestream::{
    byte_stream_client::ByteStreamClient, ReadRequest, WriteRequest,
};
use bazel_remote_apis::google::longrunning::{
    operation, operations_client::OperationsClient, CancelOperationRequest, Operation,
};
use prost::Message;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic::transport::Channel;
use tonic::Code;

use crate::digest::{show, Blob};
use crate::RemoteError;

/// Blobs up to this size go in batches; larger ones through ByteStream (servers may refuse
/// batch requests over 4 MiB).
const BATCH_BLOB_LIMIT: usize = 1 << 20;
/// The most bytes of blobs put into one batch request.
const BATCH_BYTES: usize = 3 << 20;
/// ByteStream chunk size.
const CHUNK: usize = 1 << 20;
/// Deadline of a unary call.
const CALL_DEADLINE: Duration = Duration::from_secs(60);
/// Attempts of a call that fails transiently (the server restarting, a dropped connection).
const ATTEMPTS: u32 = 4;
/// How often a waiting execution looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Says whether the run was cancelled (Ctrl-C, a stale editor run).
pub type CancelFlag = Arc<dyn Fn() -> bool + Send + Sync>;

/// A connection to one cluster.
pub(crate) struct Client {
    pub instance: String,
    headers: Vec<(AsciiMetadataKey, AsciiMetadataValue)>,
    /// CAS, action cache, ByteStream and capabilities.
    pub storage: Channel,
    pub storage_url: String,
    /// Execution and operations (`None`: a cache without execution).
    pub execution: Option<(Channel, String)>,
}

fn transient(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable | Code::ResourceExhausted | Code::Aborted | Code::Unknown
    )
}

impl Client {
    pub fn new(
        instance: String,
        headers: &[(String, String)],
        storage: (Channel, String),
        execution: Option<(Channel, String)>,
    ) -> Result<Client, RemoteError> {
        let mut parsed = Vec::new();
        for (k, v) in headers {
            let key: AsciiMetadataKey = k
                .to_ascii_lowercase()
                .parse()
                .map_err(|_| RemoteError::Settings(format!("bad header name `{k}`")))?;
            let value: AsciiMetadataValue = v
                .parse()
                .map_err(|_| RemoteError::Settings(format!("bad value for header `{k}`")))?;
            parsed.push((key, value));
        }
        Ok(Client {
            instance,
            headers: parsed,
            storage: storage.0,
            storage_url: storage.1,
            execution,
        })
    }

    fn request<T>(&self, message: T, deadline: Option<Duration>) -> tonic::Request<T> {
        let mut r = tonic::Request::new(message);
        for (k, v) in &self.headers {
            r.metadata_mut().insert(k.clone(), v.clone());
        }
        if let Some(d) = deadline {
            r.set_timeout(d);
        }
        r
    }

    /// `call` again while it fails transiently, then the error naming `what` and `url`.
    async fn retrying<T, F, Fut>(
        &self,
        what: &str,
        url: &str,
        mut call: F,
    ) -> Result<T, RemoteError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, tonic::Status>>,
    {
        let mut wait = Duration::from_millis(250);
        let mut attempt = 1;
        loop {
            match call().await {
                Ok(t) => return Ok(t),
                Err(status) if transient(status.code()) && attempt < ATTEMPTS => {
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                    attempt += 1;
                }
                Err(status) => return Err(RemoteError::from_status(what, url, &status)),
            }
        }
    }

    pub async fn capabilities(
        &self,
        channel: &Channel,
        url: &str,
    ) -> Result<ServerCapabilities, RemoteError> {
        let call = || {
            let mut c = CapabilitiesClient::new(channel.clone());
            let r = self.request(
                GetCapabilitiesRequest {
                    instance_name: self.instance.clone(),
                },
                Some(Duration::from_secs(10)),
            );
            async move { c.get_capabilities(r).await.map(|r| r.into_inner()) }
        };
        self.retrying("asking the server's capabilities", url, call)
            .await
    }

    fn cas(&self) -> ContentAddressableStorageClient<Channel> {
        ContentAddressableStorageClient::new(self.storage.clone())
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20)
    }

    async fn find_missing(&self, digests: Vec<Digest>) -> Result<Vec<Digest>, RemoteError> {
        let mut missing = Vec::new();
        for chunk in digests.chunks(1000) {
            let call = || {
                let mut c = self.cas();
                let r = self.request(
                    FindMissingBlobsRequest {
                        instance_name: self.instance.clone(),
                        blob_digests: chunk.to_vec(),
                        digest_function: 0,
                    },
                    Some(CALL_DEADLINE),
                );
                async move { c.find_missing_blobs(r).await.map(|r| r.into_inner()) }
            };
            let found = self
                .retrying("finding missing blobs", &self.storage_url, call)
                .await?;
            missing.extend(found.missing_blob_digests);
        }
        Ok(missing)
    }

    /// Uploads those of `blobs` the CAS does not have.
    pub async fn upload(&self, blobs: &[Blob]) -> Result<(), RemoteError> {
        let mut unique: Vec<&Blob> = Vec::new();
        for b in blobs {
            if !unique.iter().any(|u| u.digest == b.digest) {
                unique.push(b);
            }
        }
        let missing = self
            .find_missing(unique.iter().map(|b| b.digest.clone()).collect())
            .await?;
        let todo: Vec<&Blob> = unique
            .into_iter()
            .filter(|b| missing.contains(&b.digest))
            .collect();
        let mut batch: Vec<&Blob> = Vec::new();
        let mut batch_bytes = 0;
        for blob in &todo {
            if blob.bytes.len() > BATCH_BLOB_LIMIT {
                self.write_stream(blob).await?;
                continue;
            }
            if batch_bytes + blob.bytes.len() > BATCH_BYTES {
                self.write_batch(&std::mem::take(&mut batch)).await?;
                batch_bytes = 0;
            }
            batch_bytes += blob.bytes.len();
            batch.push(blob);
        }
        if !batch.is_empty() {
            self.write_batch(&batch).await?;
        }
        Ok(())
    }

    async fn write_batch(&self, blobs: &[&Blob]) -> Result<(), RemoteError> {
        let call = || {
            let mut c = self.cas();
            let r = self.request(
                BatchUpdateBlobsRequest {
                    instance_name: self.instance.clone(),
                    requests: blobs
                        .iter()
                        .map(|b| batch_update_blobs_request::Request {
                            digest: Some(b.digest.clone()),
                            data: b.bytes.as_ref().clone(),
                            compressor: 0,
                        })
                        .collect(),
                    digest_function: 0,
                },
                Some(CALL_DEADLINE),
            );
            async move { c.batch_update_blobs(r).await.map(|r| r.into_inner()) }
        };
        let answer = self
            .retrying("uploading blobs", &self.storage_url, call)
            .await?;
        for r in answer.responses {
            if let Some(status) = r.status.filter(|s| s.code != 0) {
                let which = r.digest.as_ref().map(show).unwrap_or_default();
                return Err(RemoteError::Server(format!(
                    "{}: uploading blob {which}: {}",
                    self.storage_url, status.message
                )));
            }
        }
        Ok(())
    }

    fn resource(&self, rest: String) -> String {
        if self.instance.is_empty() {
            rest
        } else {
            format!("{}/{rest}", self.instance)
        }
    }

    async fn write_stream(&self, blob: &Blob) -> Result<(), RemoteError> {
        let call = || {
            let name = self.resource(format!(
                "uploads/{}/blobs/{}",
                uuid::Uuid::new_v4(),
                show(&blob.digest)
            ));
            let bytes = blob.bytes.clone();
            let total = bytes.len();
            let requests: Vec<WriteRequest> = (0..total.max(1))
                .step_by(CHUNK)
                .map(|offset| {
                    let end = (offset + CHUNK).min(total);
                    WriteRequest {
                        resource_name: if offset == 0 {
                            name.clone()
                        } else {
                            String::new()
                        },
                        write_offset: offset as i64,
                        finish_write: end == total,
                        data: bytes[offset..end].to_vec(),
                    }
                })
                .collect();
            let mut c = ByteStreamClient::new(self.storage.clone());
            let r = self.request(tokio_stream::iter(requests), Some(Duration::from_secs(600)));
            async move { c.write(r).await.map(|r| r.into_inner()) }
        };
        let written = self
            .retrying("uploading a large blob", &self.storage_url, call)
            .await?;
        if written.committed_size != blob.digest.size_bytes {
            return Err(RemoteError::Server(format!(
                "{}: the server kept {} of {} bytes of blob {}",
                self.storage_url,
                written.committed_size,
                blob.digest.size_bytes,
                show(&blob.digest)
            )));
        }
        Ok(())
    }

    /// The blob `digest` from the CAS.
    pub async fn read(&self, digest: &Digest) -> Result<Vec<u8>, RemoteError> {
        if digest.size_bytes == 0 {
            return Ok(Vec::new());
        }
        if digest.size_bytes as usize > BATCH_BLOB_LIMIT {
            let call = || {
                let mut c =
                    ByteStreamClient::new(self.storage.clone()).max_decoding_message_size(64 << 20);
                let r = self.request(
                    ReadRequest {
                        resource_name: self.resource(format!("blobs/{}", show(digest))),
                        read_offset: 0,
                        read_limit: 0,
                    },
                    Some(Duration::from_secs(600)),
                );
                async move {
                    let mut stream = c.read(r).await?.into_inner();
                    let mut bytes = Vec::new();
                    while let Some(part) = stream.message().await? {
                        bytes.extend(part.data);
                    }
                    Ok(bytes)
                }
            };
            return self
                .retrying("reading a blob", &self.storage_url, call)
                .await;
        }
        let call = || {
            let mut c = self.cas();
            let r = self.request(
                BatchReadBlobsRequest {
                    instance_name: self.instance.clone(),
                    digests: vec![digest.clone()],
                    acceptable_compressors: Vec::new(),
                    digest_function: 0,
                },
                Some(CALL_DEADLINE),
            );
            async move { c.batch_read_blobs(r).await.map(|r| r.into_inner()) }
        };
        let answer = self
            .retrying("reading a blob", &self.storage_url, call)
            .await?;
        match answer.responses.into_iter().next() {
            Some(r) if r.status.as_ref().is_none_or(|s| s.code == 0) => Ok(r.data),
            Some(r) => Err(RemoteError::Server(format!(
                "{}: reading blob {}: {}",
                self.storage_url,
                show(digest),
                r.status.map(|s| s.message).unwrap_or_default()
            ))),
            None => Err(RemoteError::Server(format!(
                "{}: no answer for blob {}",
                self.storage_url,
                show(digest)
            ))),
        }
    }

    /// The action cache's result for `action` (`None`: not there).
    pub async fn lookup(&self, action: &Digest) -> Result<Option<ActionResult>, RemoteError> {
        let call = || {
            let mut c = ActionCacheClient::new(self.storage.clone());
            let r = self.request(
                GetActionResultRequest {
                    instance_name: self.instance.clone(),
                    action_digest: Some(action.clone()),
                    inline_stdout: false,
                    inline_stderr: false,
                    inline_output_files: Vec::new(),
                    digest_function: 0,
                },
                Some(CALL_DEADLINE),
            );
            async move {
                match c.get_action_result(r).await {
                    Ok(r) => Ok(Some(r.into_inner())),
                    Err(s) if s.code() == Code::NotFound => Ok(None),
                    Err(s) => Err(s),
                }
            }
        };
        self.retrying("looking up the action cache", &self.storage_url, call)
            .await
    }

    /// Stores `result` for `action` in the action cache.
    pub async fn store(&self, action: &Digest, result: &ActionResult) -> Result<(), RemoteError> {
        let call = || {
            let mut c = ActionCacheClient::new(self.storage.clone());
            let r = self.request(
                UpdateActionResultRequest {
                    instance_name: self.instance.clone(),
                    action_digest: Some(action.clone()),
                    action_result: Some(result.clone()),
                    results_cache_policy: None,
                    digest_function: 0,
                },
                Some(CALL_DEADLINE),
            );
            async move { c.update_action_result(r).await.map(|_| ()) }
        };
        self.retrying("storing in the action cache", &self.storage_url, call)
            .await
    }

    /// Executes `action` (its inputs uploaded) and waits for its response, following the
    /// operation again when the stream breaks; `cancelled` is looked at while waiting, and
    /// once set the operation is cancelled on the server.
    pub async fn execute(
        &self,
        action: &Digest,
        cancelled: &CancelFlag,
    ) -> Result<ExecuteResponse, RemoteError> {
        let Some((channel, url)) = &self.execution else {
            return Err(RemoteError::Settings("no remote executor is set".into()));
        };
        let mut name: Option<String> = None;
        let mut failures = 0;
        let mut wait = Duration::from_millis(250);
        loop {
            let mut client =
                ExecutionClient::new(channel.clone()).max_decoding_message_size(64 << 20);
            let opened = match &name {
                None => {
                    let r = self.request(
                        ExecuteRequest {
                            instance_name: self.instance.clone(),
                            skip_cache_lookup: false,
                            action_digest: Some(action.clone()),
                            ..ExecuteRequest::default()
                        },
                        None,
                    );
                    client.execute(r).await
                }
                Some(n) => {
                    let r = self.request(WaitExecutionRequest { name: n.clone() }, None);
                    client.wait_execution(r).await
                }
            };
            let mut stream = match opened {
                Ok(s) => s.into_inner(),
                Err(status) if name.is_some() && status.code() == Code::NotFound => {
                    // The server forgot the operation (it restarted): execute anew.
                    name = None;
                    failures += 1;
                    if failures >= ATTEMPTS {
                        return Err(RemoteError::from_status(
                            "executing an action",
                            url,
                            &status,
                        ));
                    }
                    continue;
                }
                Err(status) => {
                    failures += 1;
                    if !transient(status.code()) || failures >= ATTEMPTS {
                        return Err(RemoteError::from_status(
                            "executing an action",
                            url,
                            &status,
                        ));
                    }
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                    continue;
                }
            };
            let mut poll = tokio::time::interval(CANCEL_POLL);
            let broken = loop {
                tokio::select! {
                    message = stream.message() => match message {
                        Ok(Some(op)) => {
                            failures = 0;
                            wait = Duration::from_millis(250);
                            name = Some(op.name.clone());
                            if op.done {
                                return finished(op, url);
                            }
                        }
                        Ok(None) => break None,
                        Err(status) => break Some(status),
                    },
                    _ = poll.tick() => {
                        if cancelled() {
                            if let Some(n) = &name {
                                self.cancel(channel, n).await;
                            }
                            return Err(RemoteError::Cancelled);
                        }
                    }
                }
            };
            failures += 1;
            if let Some(status) = &broken {
                if !transient(status.code()) && status.code() != Code::Cancelled
                    || failures >= ATTEMPTS
                {
                    return Err(RemoteError::from_status("executing an action", url, status));
                }
            } else if failures >= ATTEMPTS {
                return Err(RemoteError::Server(format!(
                    "{url}: the operation stream of action {} ended before the action did",
                    show(action)
                )));
            }
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
    }

    async fn cancel(&self, channel: &Channel, name: &str) {
        let mut c = OperationsClient::new(channel.clone());
        let r = self.request(
            CancelOperationRequest {
                name: name.to_string(),
            },
            Some(Duration::from_secs(5)),
        );
        // Best effort: the run is over either way.
        let _ = c.cancel_operation(r).await;
    }
}

fn finished(op: Operation, url: &str) -> Result<ExecuteResponse, RemoteError> {
    match op.result {
        Some(operation::Result::Response(any)) => ExecuteResponse::decode(any.value.as_slice())
            .map_err(|e| RemoteError::Server(format!("{url}: unreadable execute response: {e}"))),
        Some(operation::Result::Error(status)) => Err(RemoteError::Server(format!(
            "{url}: the action failed: {} ({})",
            status.message,
            Code::from_i32(status.code).description()
        ))),
        None => Err(RemoteError::Server(format!(
            "{url}: operation {} is done without a result",
            op.name
        ))),
    }
}
