//! Content addresses: blobs and their SHA-256 digests, as REAPI names them.

use std::sync::Arc;

use bazel_remote_apis::build::bazel::remote::execution::v2::Digest;
use sha2::{Digest as _, Sha256};

/// Bytes with their digest.
#[derive(Clone, Debug)]
pub struct Blob {
    pub digest: Digest,
    pub bytes: Arc<Vec<u8>>,
}

impl Blob {
    pub fn new(bytes: Vec<u8>) -> Blob {
        Blob {
            digest: digest_of(&bytes),
            bytes: Arc::new(bytes),
        }
    }

    /// A protocol message as REAPI stores it (its binary encoding).
    pub fn of_message<M: prost::Message>(message: &M) -> Blob {
        Blob::new(message.encode_to_vec())
    }
}

/// The SHA-256 digest of `bytes` (lower-case hex, as REAPI requires).
pub fn digest_of(bytes: &[u8]) -> Digest {
    Digest {
        hash: hex::encode(Sha256::digest(bytes)),
        size_bytes: bytes.len() as i64,
    }
}

/// `hash/size`, the digest as resource names and messages print it.
pub fn show(digest: &Digest) -> String {
    format!("{}/{}", digest.hash, digest.size_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_of_nothing_is_sha256_of_the_empty_string() {
        let d = digest_of(b"");
        assert_eq!(
            d.hash,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(d.size_bytes, 0);
        assert_eq!(Blob::new(b"abc".to_vec()).digest.size_bytes, 3);
    }
}
