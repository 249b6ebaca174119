//! `germanium debug FILE`: verifies FILE with the execution log and counterexamples on,
//! then serves one page on `127.0.0.1` that walks the log (`page/index.html`, embedded).
//!
//! The page asks for what it shows, one record at a time (`/api/record/ID` with its
//! children's headings, its state and failures); the server keeps only the log's index
//! in memory (`germanium_trace_log::Index`), never the whole log.
//!
//! Architecture invariant: read-only over a finished run; serves only the page, the API and
//! the program's own source files, on the loopback interface.

mod api;
mod session;

pub use api::Answer;
pub use session::{Session, SessionError};

use std::io::Write;

/// Serves `session` on `127.0.0.1:port` (`0`: a free port) until the process is stopped;
/// writes the page's address to `announce` first.
pub fn serve(session: Session, port: u16, announce: &mut dyn Write) -> std::io::Result<()> {
    let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(std::io::Error::other)?;
    let address = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| std::io::Error::other("the server has no IP address"))?;
    writeln!(
        announce,
        "Germanium debugger for {}: http://{address}/ (Ctrl-C stops it)",
        session.file_name()
    )?;
    announce.flush()?;
    for request in server.incoming_requests() {
        let answer = if *request.method() == tiny_http::Method::Get {
            session.answer(request.url())
        } else {
            api::not_found("only GET is served")
        };
        let header = tiny_http::Header::from_bytes("Content-Type", answer.content_type)
            .expect("a valid header");
        let response = tiny_http::Response::from_data(answer.body)
            .with_header(header)
            .with_status_code(answer.status);
        // A client that went away is not our problem.
        let _ = request.respond(response);
    }
    Ok(())
}

impl Session {
    /// The answer to `GET url` (the page, the API, a source file, or 404).
    pub fn answer(&self, url: &str) -> Answer {
        api::answer(self, url)
    }
}
