//! `germanium lsp`: a Language Server Protocol server for Viper files, on `lsp-server`
//! (the protocol's framing and message types) and `lsp-types`.
//!
//! One loop owns the open documents ([`server`]); verification runs on threads of their own
//! through the driver ([`verification`]), on the buffer's text, one run per document at a
//! time: a change cancels the running one (its [`germanium_driver::Cancel`]) and starts a
//! new run once the text has been still for the debounce time; opening and saving start one
//! at once. What the editor asks (hover, code lenses, symbols, definitions) is answered from
//! the document's last finished run and an outline parsed from its current text
//! ([`outline`]), without waiting for a run.
//!
//! Architecture invariant: protocol messages are the only thing written to stdout; a run's
//! results are published only if no newer text has been seen since it started.

mod line_index;
mod outline;
mod requests;
mod server;
mod verification;

use std::time::Duration;

use lsp_server::Connection;

/// How the server verifies.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The driver's options for every run (Z3, timeout, jobs, cache, counterexamples).
    pub options: germanium_driver::Options,
    /// How long the text must stay unchanged before a run starts.
    pub debounce: Duration,
}

/// Serves on standard input and output until the client says `exit` or closes the stream.
pub fn run_stdio(settings: Settings) -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    serve(&connection, settings)?;
    drop(connection);
    io_threads.join().map_err(|e| e.to_string())
}

/// Serves one client on `connection`: the initialize handshake, then requests and
/// notifications until shutdown.
pub fn serve(connection: &Connection, settings: Settings) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let params: lsp_types::InitializeParams =
        serde_json::from_value(params).map_err(|e| format!("bad initialize request: {e}"))?;
    let result = lsp_types::InitializeResult {
        capabilities: server::capabilities(),
        server_info: Some(lsp_types::ServerInfo {
            name: "germanium".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    };
    let result = serde_json::to_value(result).map_err(|e| e.to_string())?;
    connection
        .initialize_finish(id, result)
        .map_err(|e| e.to_string())?;
    // Outlines parse on the loop's thread, and parsing recurses: give it the stack the
    // driver gives its front end, so deeply nested text is a diagnostic, not a crash.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("germanium-lsp".into())
            .stack_size(germanium_driver::DEFAULT_STACK_SIZE)
            .spawn_scoped(scope, || {
                server::Server::new(connection, settings, &params.capabilities).run()
            })
            .map_err(|e| format!("cannot start the server thread: {e}"))?
            .join()
            .map_err(|_| "the server thread panicked".to_string())?
    })
}
