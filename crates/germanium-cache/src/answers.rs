//! Answers to solver queries, kept in the cache's database so that a member verified again
//! after an edit asks Z3 only what the edit changed (see `germanium_smt::answers` for the
//! keys and why a stored answer holds for every query with that key).
//!
//! Lookups read the database as it was before the run's answers are written: answers found
//! in a run are written together at [`StoredAnswers::flush`], so which answers a run sees
//! does not depend on which of its workers asked first. The table is emptied when it grows
//! past [`MAX_ANSWERS`] entries (about 100 MB): the answers are an accelerator, and the
//! next run refills what it needs.

use std::sync::{Arc, Mutex};

use germanium_smt::{AnswerStore, QueryKey, SatResult};
use redb::{Database, ReadableDatabase, ReadableTableMetadata, TableDefinition};
use sha2::{Digest, Sha256};

const ANSWERS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("query-answers");

/// Entries past which the table is emptied before new answers are written.
pub const MAX_ANSWERS: u64 = 1_000_000;

/// The answers table of one database, with a salt (the versions of Germanium and Z3 and the
/// options that change answers) mixed into every key.
#[derive(Debug)]
pub struct StoredAnswers {
    db: Arc<Database>,
    salt: [u8; 32],
    found: Mutex<Vec<([u8; 32], Vec<u8>)>>,
}

impl StoredAnswers {
    pub(crate) fn new(db: Arc<Database>, salt: &str) -> StoredAnswers {
        StoredAnswers {
            db,
            salt: Sha256::digest(salt.as_bytes()).into(),
            found: Mutex::new(Vec::new()),
        }
    }

    fn salted(&self, key: &QueryKey) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.salt);
        h.update(key.0);
        h.finalize().into()
    }

    /// Writes the answers recorded since the last flush (one transaction); says whether
    /// they were written.
    pub fn flush(&self) -> bool {
        let found = std::mem::take(&mut *self.found.lock().unwrap_or_else(|e| e.into_inner()));
        if found.is_empty() {
            return true;
        }
        let Ok(write) = self.db.begin_write() else {
            return false;
        };
        let full = write
            .open_table(ANSWERS)
            .ok()
            .and_then(|t| t.len().ok())
            .is_some_and(|n| n + found.len() as u64 > MAX_ANSWERS);
        if full && write.delete_table(ANSWERS).is_err() {
            return false;
        }
        let stored = match write.open_table(ANSWERS) {
            Ok(mut table) => found
                .iter()
                .all(|(key, answer)| table.insert(key.as_slice(), answer.as_slice()).is_ok()),
            Err(_) => false,
        };
        stored && write.commit().is_ok()
    }

    /// How many answers the table holds.
    pub fn len(&self) -> u64 {
        let Ok(read) = self.db.begin_read() else {
            return 0;
        };
        read.open_table(ANSWERS)
            .ok()
            .and_then(|t| t.len().ok())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AnswerStore for StoredAnswers {
    fn answer(&self, key: &QueryKey) -> Option<SatResult> {
        let read = self.db.begin_read().ok()?;
        let table = read.open_table(ANSWERS).ok()?;
        let value = table.get(self.salted(key).as_slice()).ok()??;
        decode(value.value())
    }

    fn record(&self, key: QueryKey, answer: &SatResult) {
        let entry = (self.salted(&key), encode(answer));
        self.found
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(entry);
    }
}

fn encode(answer: &SatResult) -> Vec<u8> {
    match answer {
        SatResult::Sat => b"s".to_vec(),
        SatResult::Unsat => b"u".to_vec(),
        SatResult::Unknown(reason) => [b"?".as_slice(), reason.as_bytes()].concat(),
    }
}

/// `None` for a damaged entry (a miss).
fn decode(bytes: &[u8]) -> Option<SatResult> {
    match bytes.split_first()? {
        (b's', []) => Some(SatResult::Sat),
        (b'u', []) => Some(SatResult::Unsat),
        (b'?', reason) => Some(SatResult::Unknown(String::from_utf8(reason.to_vec()).ok()?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResultCache;

    #[test]
    fn answers_are_found_by_the_next_run_not_the_one_that_found_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.redb");
        let key = QueryKey([3; 32]);
        let unknown = SatResult::Unknown("(incomplete quantifiers)".into());
        {
            let cache = ResultCache::open(&path).unwrap();
            let answers = cache.answers("z3 4.15");
            assert_eq!(answers.answer(&key), None);
            answers.record(key, &SatResult::Unsat);
            answers.record(QueryKey([4; 32]), &unknown);
            assert_eq!(answers.answer(&key), None, "seen before the flush");
            assert!(answers.flush());
            assert_eq!(answers.len(), 2);
        }
        let cache = ResultCache::open(&path).unwrap();
        let answers = cache.answers("z3 4.15");
        assert_eq!(answers.answer(&key), Some(SatResult::Unsat));
        assert_eq!(answers.answer(&QueryKey([4; 32])), Some(unknown));
        // Another salt (another Z3, other options) sees none of them.
        assert_eq!(cache.answers("z3 4.16").answer(&key), None);
    }

    #[test]
    fn damaged_entries_are_misses() {
        assert_eq!(decode(b""), None);
        assert_eq!(decode(b"x"), None);
        assert_eq!(decode(b"sx"), None);
        for answer in [
            SatResult::Sat,
            SatResult::Unsat,
            SatResult::Unknown("why".into()),
        ] {
            assert_eq!(decode(&encode(&answer)), Some(answer));
        }
    }
}
