//! The store: one embedded database file (redb), key → the member's errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, ReadableDatabase, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::answers::StoredAnswers;
use crate::keys::Key;

const RESULTS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("member-results");

/// An error of a member, placed relative to the member's start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedError {
    pub id: String,
    pub message: String,
    pub warning: bool,
    /// Byte offsets from the start of the member's declaration.
    pub start: u32,
    pub end: u32,
}

/// An open cache.
pub struct ResultCache {
    db: Arc<Database>,
}

impl ResultCache {
    /// Where the cache lives: `$GERMANIUM_CACHE_DIR`, else the user's cache directory.
    pub fn default_path() -> Option<PathBuf> {
        let dir = std::env::var_os("GERMANIUM_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("germanium")))?;
        Some(dir.join("results.redb"))
    }

    /// Opens (or creates) the cache at `path`; `None` when it cannot be (another process
    /// holds it, the directory cannot be made): the run goes on without a cache.
    pub fn open(path: &Path) -> Option<ResultCache> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).ok()?;
        }
        Database::create(path)
            .ok()
            .map(|db| ResultCache { db: Arc::new(db) })
    }

    /// The stored answers to solver queries, their keys salted with `salt`.
    pub fn answers(&self, salt: &str) -> Arc<StoredAnswers> {
        Arc::new(StoredAnswers::new(self.db.clone(), salt))
    }

    /// The errors stored under `key`, if any (a damaged entry is a miss).
    pub fn get(&self, key: &Key) -> Option<Vec<CachedError>> {
        let read = self.db.begin_read().ok()?;
        let table = read.open_table(RESULTS).ok()?;
        let value = table.get(key.0.as_slice()).ok()??;
        serde_json::from_slice(value.value()).ok()
    }

    /// Stores `errors` under `key`; says whether it was stored.
    pub fn put(&self, key: &Key, errors: &[CachedError]) -> bool {
        self.put_all(&[(*key, errors.to_vec())])
    }

    /// Stores every `(key, errors)` in one transaction (one write to disk for a file's
    /// members); says whether they were stored.
    pub fn put_all(&self, entries: &[(Key, Vec<CachedError>)]) -> bool {
        if entries.is_empty() {
            return true;
        }
        let Ok(write) = self.db.begin_write() else {
            return false;
        };
        let stored = match write.open_table(RESULTS) {
            Ok(mut table) => entries.iter().all(|(key, errors)| {
                serde_json::to_vec(errors)
                    .is_ok_and(|bytes| table.insert(key.0.as_slice(), bytes.as_slice()).is_ok())
            }),
            Err(_) => false,
        };
        stored && write.commit().is_ok()
    }

    /// Removes the cache file at `path` (`germanium cache clear`).
    pub fn clear(path: &Path) -> std::io::Result<()> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_stored_and_found_again_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("results.redb");
        let key = Key([7; 32]);
        let errors = vec![CachedError {
            id: "assert.failed:assertion.false".into(),
            message: "Assert might fail.".into(),
            warning: false,
            start: 40,
            end: 48,
        }];
        {
            let cache = ResultCache::open(&path).unwrap();
            assert_eq!(cache.get(&key), None);
            assert!(cache.put(&key, &errors));
            assert!(cache.put(&Key([8; 32]), &[]));
        }
        let cache = ResultCache::open(&path).unwrap();
        assert_eq!(cache.get(&key), Some(errors));
        assert_eq!(cache.get(&Key([8; 32])), Some(vec![]));
        drop(cache);
        ResultCache::clear(&path).unwrap();
        ResultCache::clear(&path).unwrap();
        assert_eq!(ResultCache::open(&path).unwrap().get(&key), None);
    }

    #[test]
    fn a_damaged_file_is_no_cache_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.redb");
        std::fs::write(&path, b"not a database").unwrap();
        assert!(ResultCache::open(&path).is_none());
    }
}
