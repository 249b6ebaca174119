//! Where the cluster is and how to speak to it: the address (`grpc://`, `grpcs://`, or
//! `http(s)://`), the instance name, TLS and extra request headers.

use std::path::PathBuf;
use std::time::Duration;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use crate::RemoteError;

/// How to reach one REAPI server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointSettings {
    /// `grpc://HOST:PORT` (plain), `grpcs://HOST:PORT` (TLS), or the same as `http(s)://`.
    pub url: String,
    /// A PEM file of certificate authorities to trust besides the system's.
    pub tls_ca: Option<PathBuf>,
    /// A PEM client certificate and key, for clusters that authenticate clients by TLS.
    pub tls_client_cert: Option<PathBuf>,
    pub tls_client_key: Option<PathBuf>,
}

/// Gives up connecting after this long: an unreachable cluster is an error, not a hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl EndpointSettings {
    /// A channel to the server (connected on first use).
    pub(crate) fn channel(&self) -> Result<Channel, RemoteError> {
        let bad = |why: String| RemoteError::Settings(format!("{}: {why}", self.url));
        let (tls, rest) = if let Some(rest) = self.url.strip_prefix("grpcs://") {
            (true, rest)
        } else if let Some(rest) = self.url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = self.url.strip_prefix("grpc://") {
            (false, rest)
        } else if let Some(rest) = self.url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(bad(
                "expected grpc://HOST:PORT or grpcs://HOST:PORT".to_string()
            ));
        };
        if rest.is_empty() || rest.contains('/') && !rest.ends_with('/') {
            return Err(bad("expected HOST:PORT after the scheme".to_string()));
        }
        let scheme = if tls { "https" } else { "http" };
        let uri = format!("{scheme}://{}", rest.trim_end_matches('/'));
        let mut endpoint = Endpoint::from_shared(uri)
            .map_err(|e| bad(e.to_string()))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(20));
        if tls {
            let mut config = ClientTlsConfig::new().with_native_roots();
            if let Some(ca) = &self.tls_ca {
                let pem = std::fs::read(ca).map_err(|e| bad(format!("{}: {e}", ca.display())))?;
                config = config.ca_certificate(Certificate::from_pem(pem));
            }
            match (&self.tls_client_cert, &self.tls_client_key) {
                (Some(cert), Some(key)) => {
                    let read = |p: &PathBuf| {
                        std::fs::read(p).map_err(|e| bad(format!("{}: {e}", p.display())))
                    };
                    config = config.identity(Identity::from_pem(read(cert)?, read(key)?));
                }
                (None, None) => {}
                _ => {
                    return Err(bad(
                        "a client certificate needs its key and the other way round".to_string(),
                    ))
                }
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| bad(e.to_string()))?;
        } else if self.tls_ca.is_some() || self.tls_client_cert.is_some() {
            return Err(bad("TLS options need a grpcs:// address".to_string()));
        }
        Ok(endpoint.connect_lazy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> EndpointSettings {
        EndpointSettings {
            url: u.into(),
            ..EndpointSettings::default()
        }
    }

    #[test]
    fn addresses_need_a_known_scheme_and_a_host() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        assert!(url("grpc://127.0.0.1:8980").channel().is_ok());
        assert!(url("http://localhost:1").channel().is_ok());
        assert!(url("grpcs://example.org:443").channel().is_ok());
        for bad in ["127.0.0.1:8980", "ftp://x:1", "grpc://", "grpc://h:1/path"] {
            let e = url(bad).channel().unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
        let mut tls_on_plain = url("grpc://h:1");
        tls_on_plain.tls_ca = Some("/nonexistent.pem".into());
        assert!(tls_on_plain.channel().is_err());
    }
}
