//! The audit trail on disk: `agent.log` and one rotated `agent.log.1` in
//! the per-user data directory, each at most 2 MiB, one JSON record a line.
//!
//! Several servers (one per client session) may append at once, so every
//! append holds an OS file lock on `agent.log.lock` while it reads the last
//! record, rotates and writes; without it two servers would both chain onto
//! the same predecessor and the trail would read as tampered.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wamcp_policy::devenv::audit::{
    Event, GENESIS, Outcome, Reading, Record, line_hash, read_chain, rfc3339,
};
use wamcp_policy::devenv::safety::Safety;

/// A segment is rotated before it would grow past this.
pub const MAX_SEGMENT_BYTES: u64 = 2 * 1024 * 1024;
const CURRENT: &str = "agent.log";
const ROTATED: &str = "agent.log.1";

/// How long an append waits for another writer. Appends take
/// milliseconds; the lock is a file any process of the user can open (reads
/// are not confined), so a command could hold it for ever, and a wait
/// without end would hang every audited call after it.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Takes the exclusive lock on `file`, or fails once `wait` has passed.
fn take_within(file: &File, wait: Duration) -> io::Result<()> {
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "agent.log.lock is held by another process (for more than {} s), so this record \
                         was not written to the trail (the server log has it)",
                        LOCK_WAIT.as_secs()
                    ),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// What a call reports to the trail.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The tool that was called.
    pub tool: &'static str,
    /// The capability or package id, when the call named one.
    pub subject: Option<String>,
    /// The safety class of what ran, when it had one.
    pub safety: Option<Safety>,
    /// A run, an approval, or a host's outcome.
    pub event: Event,
    /// What the call established about its effect.
    pub outcome: Outcome,
    /// How long the call took; written in whole milliseconds.
    pub duration: Duration,
    /// A short fixed phrase such as `exit code 2`; never program output.
    pub detail: Option<String>,
}

/// The trail in one directory.
#[derive(Clone, Debug)]
pub struct AuditLog {
    dir: PathBuf,
    max_segment: u64,
    /// Set when a wait for the lock ran out, until the lock is next taken:
    /// meanwhile appends try once and do not wait, so a held lock costs
    /// one wait, not one per call (calls queued behind each other's waits).
    held_elsewhere: Arc<AtomicBool>,
}

impl AuditLog {
    /// The trail kept in `dir`, with segments of [`MAX_SEGMENT_BYTES`]; nothing
    /// is created until the first append.
    pub fn new(dir: PathBuf) -> AuditLog {
        AuditLog {
            dir,
            max_segment: MAX_SEGMENT_BYTES,
            held_elsewhere: Arc::default(),
        }
    }

    /// A trail with small segments, to test rotation.
    #[cfg(test)]
    pub fn with_segment_limit(dir: PathBuf, max_segment: u64) -> AuditLog {
        AuditLog {
            dir,
            max_segment,
            held_elsewhere: Arc::default(),
        }
    }

    /// The directory the trail lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The files of the trail, for write protection.
    pub fn files(&self) -> [PathBuf; 3] {
        [CURRENT, ROTATED, "agent.log.lock"].map(|name| self.dir.join(name))
    }

    /// Appends one record chained to the last one written.
    pub fn append(&self, entry: Entry) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("agent.log.lock"))?;
        let wait = if self.held_elsewhere.load(Ordering::SeqCst) {
            Duration::ZERO
        } else {
            LOCK_WAIT
        };
        let taken = take_within(&lock, wait);
        self.held_elsewhere.store(taken.is_err(), Ordering::SeqCst);
        taken?;
        let current = self.dir.join(CURRENT);
        let last = match last_line(&current)? {
            Some(line) => Some(line),
            None => last_line(&self.dir.join(ROTATED))?,
        };
        let (seq, prev) = match &last {
            Some(line) => {
                // A last line that is not a record (edited) still chains:
                // the reader reports the break, and writing goes on.
                let seq = serde_json::from_str::<Record>(line).map_or(0, |r| r.seq);
                (seq + 1, line_hash(line))
            }
            None => (1, GENESIS.to_string()),
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let record = Record {
            seq,
            time: rfc3339(now),
            tool: entry.tool.to_string(),
            subject: entry.subject,
            safety: entry.safety,
            event: entry.event,
            outcome: entry.outcome,
            duration_ms: entry.duration.as_millis() as u64,
            detail: entry.detail,
            prev,
        };
        let mut line = serde_json::to_string(&record).map_err(io::Error::other)?;
        line.push('\n');
        let size = std::fs::metadata(&current).map_or(0, |m| m.len());
        if size > 0 && size + line.len() as u64 > self.max_segment {
            std::fs::rename(&current, self.dir.join(ROTATED))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&current)?;
        file.write_all(line.as_bytes())?;
        file.sync_data()
    }

    /// Every retained record, oldest first, with what the chain shows. A
    /// segment that cannot be read (or vanished between listing and
    /// reading, as a rotation by another server makes it) is named and the
    /// other is still read.
    pub fn read(&self) -> Reading {
        let mut texts = Vec::new();
        let mut unreadable = Vec::new();
        for name in [ROTATED, CURRENT] {
            match read_capped(&self.dir.join(name), self.max_segment * 2) {
                Ok(Some(text)) => texts.push((name, text)),
                Ok(None) => {}
                Err(e) => unreadable.push(format!("{name} could not be read: {e}")),
            }
        }
        let mut reading = read_chain(
            texts
                .iter()
                .flat_map(|(name, text)| text.lines().map(move |l| (*name, l))),
        );
        reading.problems.extend(unreadable);
        reading
    }
}

/// The file's text, `None` when it does not exist.
fn read_capped(path: &Path, cap: u64) -> io::Result<Option<String>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The last non-empty line of `path`, read from its end.
fn last_line(path: &Path) -> io::Result<Option<String>> {
    const WINDOW: u64 = 64 * 1024;
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    file.seek(SeekFrom::Start(size.saturating_sub(WINDOW)))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(outcome: Outcome) -> Entry {
        Entry {
            tool: "capability_run",
            subject: Some("inspect-git".into()),
            safety: Some(Safety::ReadOnly),
            event: Event::Execution,
            outcome,
            duration: Duration::from_millis(12),
            detail: None,
        }
    }

    #[test]
    fn records_chain_across_rotation_and_the_oldest_segment_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::with_segment_limit(dir.path().to_path_buf(), 1000);
        for _ in 0..30 {
            log.append(entry(Outcome::Succeeded)).unwrap();
        }
        let reading = log.read();
        assert_eq!(reading.problems, Vec::<String>::new());
        let seqs: Vec<u64> = reading.records.iter().map(|r| r.seq).collect();
        assert_eq!(*seqs.last().unwrap(), 30);
        assert!(seqs.len() < 30, "rotation dropped the oldest: {seqs:?}");
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
        for name in [CURRENT, ROTATED] {
            let size = std::fs::metadata(dir.path().join(name)).unwrap().len();
            assert!(size <= 1000, "{name} is {size} bytes");
        }
    }

    /// Any process can hold the lock: an append then fails after one
    /// bounded wait, later ones while it stays held fail without waiting
    /// again, and the first append after it is released is written.
    #[test]
    fn a_held_lock_fails_appends_and_a_released_one_is_taken_again() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().to_path_buf());
        let holder = File::create(dir.path().join("agent.log.lock")).unwrap();
        holder.lock().unwrap();
        let err = log.append(entry(Outcome::Succeeded)).unwrap_err();
        assert!(err.to_string().contains("held by another process"), "{err}");
        assert!(log.held_elsewhere.load(Ordering::SeqCst));
        assert!(log.clone().append(entry(Outcome::Succeeded)).is_err());
        drop(holder);
        log.append(entry(Outcome::Succeeded)).unwrap();
        assert!(!log.held_elsewhere.load(Ordering::SeqCst));
        assert_eq!(log.read().records.len(), 1);
    }

    #[test]
    fn an_edited_record_is_reported_and_appending_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().to_path_buf());
        for outcome in [Outcome::Failed, Outcome::Succeeded, Outcome::Unknown] {
            log.append(entry(outcome)).unwrap();
        }
        let path = dir.path().join(CURRENT);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("\"failed\"", "\"succeeded\"", 1)).unwrap();
        log.append(entry(Outcome::Succeeded)).unwrap();
        let reading = log.read();
        assert_eq!(reading.records.len(), 4);
        assert_eq!(
            reading.problems,
            [
                "agent.log: record 2 does not follow record 1: records were edited, removed or inserted"
            ]
        );
    }

    #[test]
    fn a_missing_segment_is_not_an_error_and_an_unreadable_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().to_path_buf());
        assert_eq!(log.read(), Reading::default());
        log.append(entry(Outcome::NotExecuted)).unwrap();
        std::fs::create_dir(dir.path().join(ROTATED)).unwrap();
        let reading = log.read();
        assert_eq!(reading.records.len(), 1);
        assert_eq!(reading.problems.len(), 1, "{:?}", reading.problems);
        assert!(reading.problems[0].starts_with("agent.log.1 could not be read"));
    }

    #[test]
    fn parallel_appenders_keep_one_chain() {
        let dir = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let log = AuditLog::new(dir.path().to_path_buf());
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        log.append(entry(Outcome::Succeeded)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let reading = AuditLog::new(dir.path().to_path_buf()).read();
        assert_eq!(reading.problems, Vec::<String>::new());
        assert_eq!(reading.records.len(), 100);
    }
}
