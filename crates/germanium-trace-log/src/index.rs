//! Reads a log back: one pass keeps the byte offset of every line and the tree's shape;
//! records, states and facts are then read from the file one at a time.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::lines::{FailureLine, Line, RecordLine, StateLine};

/// A record's place in the tree.
#[derive(Clone, Debug, Default)]
pub struct RecordEntry {
    offset: u64,
    pub parent: Option<u64>,
    pub children: Vec<u64>,
    /// Failures inside this record (offsets of their lines).
    failures: Vec<u64>,
    /// Whether a failure is inside this record or below it.
    pub failed_below: bool,
}

/// A member's root record.
#[derive(Clone, Debug)]
pub struct MemberEntry {
    pub name: String,
    pub root: u64,
    pub failures: usize,
}

/// An execution log opened for reading.
pub struct Index {
    path: PathBuf,
    file: Mutex<File>,
    records: HashMap<u64, RecordEntry>,
    states: HashMap<u64, u64>,
    facts: HashMap<u64, u64>,
    members: Vec<MemberEntry>,
    /// Records with a failure, in log order.
    failed: Vec<u64>,
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl Index {
    /// Reads the log at `path` once, keeping offsets only.
    pub fn open(path: &Path) -> io::Result<Index> {
        let mut reader = BufReader::new(File::open(path)?);
        let mut index = Index {
            path: path.to_path_buf(),
            file: Mutex::new(File::open(path)?),
            records: HashMap::new(),
            states: HashMap::new(),
            facts: HashMap::new(),
            members: Vec::new(),
            failed: Vec::new(),
        };
        let mut offset = 0u64;
        let mut text = String::new();
        let mut number = 0usize;
        loop {
            text.clear();
            let n = reader.read_line(&mut text)?;
            if n == 0 {
                break;
            }
            number += 1;
            let line: Line = serde_json::from_str(&text)
                .map_err(|e| bad(format!("{}:{number}: {e}", path.display())))?;
            index.add(line, offset);
            offset += n as u64;
        }
        Ok(index)
    }

    fn add(&mut self, line: Line, offset: u64) {
        match line {
            Line::Log { .. } => {}
            Line::Fact(f) => {
                self.facts.insert(f.id, offset);
            }
            Line::State(s) => {
                self.states.insert(s.id, offset);
            }
            Line::Record(r) => {
                match r.parent {
                    Some(p) => self.records.entry(p).or_default().children.push(r.id),
                    None => self.members.push(MemberEntry {
                        name: r.member.clone(),
                        root: r.id,
                        failures: 0,
                    }),
                }
                let entry = self.records.entry(r.id).or_default();
                entry.offset = offset;
                entry.parent = r.parent;
            }
            Line::Failure(f) => {
                self.failed.push(f.record);
                self.records
                    .entry(f.record)
                    .or_default()
                    .failures
                    .push(offset);
                let mut at = Some(f.record);
                while let Some(id) = at {
                    let entry = self.records.entry(id).or_default();
                    entry.failed_below = true;
                    at = entry.parent;
                    if at.is_none() {
                        if let Some(m) = self.members.iter_mut().find(|m| m.root == id) {
                            m.failures += 1;
                        }
                    }
                }
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn members(&self) -> &[MemberEntry] {
        &self.members
    }

    /// Records a check failed in, in log order.
    pub fn failed_records(&self) -> &[u64] {
        &self.failed
    }

    pub fn entry(&self, id: u64) -> Option<&RecordEntry> {
        self.records.get(&id)
    }

    fn read_at(&self, offset: u64) -> io::Result<Line> {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.seek(SeekFrom::Start(offset))?;
        let mut reader = BufReader::new(&mut *file);
        let mut text = String::new();
        reader.read_line(&mut text)?;
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
    }

    pub fn record(&self, id: u64) -> io::Result<Option<RecordLine>> {
        let Some(entry) = self.records.get(&id) else {
            return Ok(None);
        };
        match self.read_at(entry.offset)? {
            Line::Record(r) => Ok(Some(r)),
            _ => Err(bad(format!("record {id} is not where the index says"))),
        }
    }

    pub fn failures(&self, id: u64) -> io::Result<Vec<FailureLine>> {
        let Some(entry) = self.records.get(&id) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for &offset in &entry.failures {
            if let Line::Failure(f) = self.read_at(offset)? {
                out.push(f);
            }
        }
        Ok(out)
    }

    pub fn state(&self, id: u64) -> io::Result<Option<StateLine>> {
        let Some(&offset) = self.states.get(&id) else {
            return Ok(None);
        };
        match self.read_at(offset)? {
            Line::State(s) => Ok(Some(s)),
            _ => Err(bad(format!("state {id} is not where the index says"))),
        }
    }

    pub fn fact(&self, id: u64) -> io::Result<Option<String>> {
        let Some(&offset) = self.facts.get(&id) else {
            return Ok(None);
        };
        match self.read_at(offset)? {
            Line::Fact(f) => Ok(Some(f.text)),
            _ => Err(bad(format!("fact {id} is not where the index says"))),
        }
    }

    /// The record before `id` in its member's tree, in pre-order (parent before children).
    pub fn previous(&self, id: u64) -> Option<u64> {
        let parent = self.records.get(&id)?.parent?;
        let siblings = &self.records.get(&parent)?.children;
        let at = siblings.iter().position(|&c| c == id)?;
        if at == 0 {
            return Some(parent);
        }
        let mut last = siblings[at - 1];
        while let Some(&child) = self.records.get(&last).and_then(|e| e.children.last()) {
            last = child;
        }
        Some(last)
    }

    /// The record after `id` in its member's tree, in pre-order.
    pub fn next(&self, id: u64) -> Option<u64> {
        if let Some(&first) = self.records.get(&id)?.children.first() {
            return Some(first);
        }
        let mut at = id;
        loop {
            let parent = self.records.get(&at)?.parent?;
            let siblings = &self.records.get(&parent)?.children;
            let i = siblings.iter().position(|&c| c == at)?;
            if let Some(&after) = siblings.get(i + 1) {
                return Some(after);
            }
            at = parent;
        }
    }

    /// The size of the log in bytes.
    pub fn size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }
}

/// Reads the whole log into lines (tests and small logs only).
pub fn read_all(path: &Path) -> io::Result<Vec<Line>> {
    let mut text = String::new();
    File::open(path)?.read_to_string(&mut text)?;
    text.lines()
        .map(|l| serde_json::from_str(l).map_err(|e| bad(e.to_string())))
        .collect()
}
