//! Searching while the tree is listed: the ordered walk hands files over
//! in path order, a pool of workers takes them in that order, and the
//! results are kept by each file's place, so what the answer covers is
//! always the longest fully searched prefix, whatever the threads did.

use crate::budget::Bounds;
use crate::folder::Folder;
use crate::ordered_walk::{Listed, OrderedWalk, walk_in_order};
use crate::walk::io_reason;
use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use wamcp_policy::limits::{MAX_GREP_FILE_BYTES, MAX_MATCH_LINE_CHARS};

/// What searching one file produced, when it is worth keeping: matches or
/// a reason it was not (fully) searched.
#[derive(Default)]
pub(super) struct FileResult {
    pub matches: Vec<(u64, String)>,
    pub binary: bool,
    pub unreadable: Option<String>,
    pub larger_than_cap: bool,
}

/// One listed file's state. Most files hold nothing, and a tree holds
/// hundreds of thousands of them, so nothing is kept for those.
pub(super) enum Slot {
    /// Not searched (yet).
    Pending,
    /// Searched: no match, nothing to say.
    Clean,
    /// Searched, with something to report.
    Noted(Box<FileResult>),
}

/// A finished (or stopped) search.
pub(super) struct Searched {
    /// Every file the walk listed, in path order.
    pub files: Vec<String>,
    /// One slot per file searched, by place; shorter than `files` when
    /// the search stopped before the last. Only a gap-free prefix is
    /// kept: a file searched after an unsearched one is `Pending`.
    pub results: Vec<Slot>,
    pub walk: OrderedWalk,
    /// The time budget ran out before every listed file was searched.
    pub out_of_time: bool,
}

/// Lists and searches `root` at once with one walker and `bounds.threads`
/// workers (one per CPU by default), stopping once the searched prefix
/// holds more than `limit` matches or the budget runs out.
pub(super) fn search_tree(
    root: &Path,
    keep: &(dyn Fn(&str, &str) -> bool + Sync),
    matcher: &RegexMatcher,
    limit: usize,
    bounds: &Bounds,
) -> Searched {
    let feed = Feed::default();
    let results = Mutex::new(Prefix::default());
    let out_of_time = AtomicBool::new(false);
    let workers = bounds
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let walk = std::thread::scope(|scope| {
        let walker = scope.spawn(|| {
            // Closed however the walk ends, a panic included: workers
            // waiting for files would otherwise wait for ever.
            let _closing = Closing(&feed);
            walk_in_order(root, keep, bounds, &feed.halted, &mut |batch| {
                feed.push(batch);
            })
        });
        for _ in 0..workers {
            scope.spawn(|| {
                // A worker that panics stops the search: the walker may be
                // waiting for it to take files.
                let _halting = HaltOnPanic(&feed);
                let mut searcher = SearcherBuilder::new()
                    .binary_detection(BinaryDetection::quit(0))
                    .line_number(true)
                    .build();
                let mut buffer = Vec::new();
                while let Some((index, folder, name)) = feed.take() {
                    if bounds.budget.exhausted(index) {
                        out_of_time.store(true, Ordering::Relaxed);
                        feed.halt();
                        break;
                    }
                    let result =
                        search_one(&mut searcher, matcher, &folder, &name, limit, &mut buffer);
                    bounds.progress.fetch_add(1, Ordering::Relaxed);
                    let mut prefix = results.lock().unwrap_or_else(|e| e.into_inner());
                    if prefix.record(index, result) > limit {
                        drop(prefix);
                        feed.halt();
                    }
                }
            });
        }
        walker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    let files = feed
        .queue
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .files
        .into_iter()
        .map(|listed| listed.rel)
        .collect();
    let mut results = results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .slots;
    if let Some(gap) = results.iter().position(|s| matches!(s, Slot::Pending)) {
        results.truncate(gap);
    }
    Searched {
        files,
        results,
        walk,
        out_of_time: out_of_time.into_inner(),
    }
}

/// Files listed but not yet taken, at most, before the walker waits. The
/// walker lists far faster than workers search, so this lead keeps them
/// busy and the list of what is waiting short.
const MAX_AHEAD: usize = 4096;

/// Walk folders open in the process, at most, before a walker that is
/// ahead waits: each queued file holds its folder open, and a process may
/// have as few as 256 handles (macOS) or 1,024 (most Linux sessions).
/// Measured on 311,640 files under `ulimit -n 256`: a lead of 256 files
/// ran out of handles.
const MAX_OPEN_FOLDERS: usize = 64;

/// The files listed so far and the next one to hand out.
#[derive(Default)]
struct Queue {
    files: Vec<Listed>,
    next: usize,
    closed: bool,
    /// Workers waiting for files. The walker is far ahead of the searchers
    /// almost always, and a wake-up is a system call even when no one waits.
    waiting: usize,
    /// The walker waits for the workers to catch up.
    walker_waiting: bool,
}

/// The walker's files on their way to the workers.
#[derive(Default)]
struct Feed {
    queue: Mutex<Queue>,
    more: Condvar,
    /// Signalled when a worker takes a file, for a walker that is ahead.
    room: Condvar,
    /// Set when the answer is known (enough matches, or out of time): the
    /// walker and the workers stop at their next step.
    halted: AtomicBool,
}

impl Feed {
    fn push(&self, mut batch: Vec<Listed>) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        while self.must_wait(&queue) {
            queue.walker_waiting = true;
            queue = self.room.wait(queue).unwrap_or_else(|e| e.into_inner());
            queue.walker_waiting = false;
        }
        queue.files.append(&mut batch);
        if queue.waiting > 0 {
            self.more.notify_all();
        }
    }

    /// Whether the walker, about to hand over more files, must first wait
    /// for the workers: too far ahead, or holding too many folders open
    /// while there is work queued (with none queued, waiting would free
    /// nothing).
    fn must_wait(&self, queue: &Queue) -> bool {
        let lead = queue.files.len() - queue.next;
        let crowded = lead > 0 && crate::folder::open_folders() >= MAX_OPEN_FOLDERS;
        (lead >= MAX_AHEAD || crowded) && !self.halted.load(Ordering::Relaxed)
    }

    fn close(&self) {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.more.notify_all();
    }

    fn halt(&self) {
        self.halted.store(true, Ordering::Relaxed);
        // Taken so that a worker between its check and its wait still
        // hears the wake-up.
        let _queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        self.more.notify_all();
        self.room.notify_all();
    }

    /// The next file in path order, with its place; `None` once halted or
    /// when the walk has ended and every file was handed out.
    fn take(&self) -> Option<(usize, Arc<Folder>, std::ffi::OsString)> {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.halted.load(Ordering::Relaxed) {
                return None;
            }
            let index = queue.next;
            if let Some(listed) = queue.files.get_mut(index) {
                // Each file is handed out once, so its folder is there.
                let folder = listed.folder.take();
                let name = std::mem::take(&mut listed.name);
                queue.next += 1;
                if queue.walker_waiting {
                    self.room.notify_one();
                }
                match folder {
                    Some(folder) => return Some((index, folder, name)),
                    None => continue,
                }
            }
            if queue.closed {
                return None;
            }
            queue.waiting += 1;
            queue = self.more.wait(queue).unwrap_or_else(|e| e.into_inner());
            queue.waiting -= 1;
        }
    }
}

/// Halts the feed when dropped while its thread panics.
struct HaltOnPanic<'a>(&'a Feed);

impl Drop for HaltOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.halt();
        }
    }
}

/// Closes the feed when dropped.
struct Closing<'a>(&'a Feed);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The results by place, and how far from the start they are complete.
#[derive(Default)]
struct Prefix {
    slots: Vec<Slot>,
    complete: usize,
    matches: usize,
}

impl Prefix {
    /// Keeps the result of file `index`; returns the matches in the
    /// complete prefix.
    fn record(&mut self, index: usize, result: FileResult) -> usize {
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || Slot::Pending);
        }
        self.slots[index] = if result.is_clean() {
            Slot::Clean
        } else {
            Slot::Noted(Box::new(result))
        };
        while let Some(slot) = self.slots.get(self.complete) {
            match slot {
                Slot::Pending => break,
                Slot::Clean => {}
                Slot::Noted(result) => self.matches += result.matches.len(),
            }
            self.complete += 1;
        }
        self.matches
    }
}

impl FileResult {
    fn is_clean(&self) -> bool {
        self.matches.is_empty()
            && !self.binary
            && self.unreadable.is_none()
            && !self.larger_than_cap
    }
}

/// Searches one file, read whole (up to the cap) into `buffer`, which a
/// worker keeps from file to file.
fn search_one(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    folder: &Folder,
    name: &std::ffi::OsStr,
    limit: usize,
    buffer: &mut Vec<u8>,
) -> FileResult {
    let mut result = FileResult::default();
    let read = folder.open_file(name).and_then(|(mut file, metadata)| {
        result.larger_than_cap = metadata.len() > MAX_GREP_FILE_BYTES;
        // Some files report no length and still have content (Linux's
        // /proc): read those to the cap.
        let want = match metadata.len() {
            0 => MAX_GREP_FILE_BYTES,
            len => len.min(MAX_GREP_FILE_BYTES),
        } as usize;
        read_up_to(&mut file, want, buffer)
    });
    let bytes = match read {
        Ok(filled) => &buffer[..filled],
        Err(e) => {
            result.unreadable = Some(io_reason(&e));
            return result;
        }
    };
    if is_binary(bytes) {
        result.binary = true;
        return result;
    }
    let mut sink = Collect {
        result: &mut result,
        limit,
    };
    if let Err(e) = searcher.search_slice(matcher, bytes, &mut sink) {
        result.matches.clear();
        result.unreadable = Some(io_reason(&e));
    }
    if result.binary {
        result.matches.clear();
    }
    result
}

/// Reads up to `want` bytes of `file` into the start of `buffer` and says
/// how many came. Asked for the length the handle reported, a file costs
/// one `read`: `read_to_end` asked for 8 KiB first and doubled from there,
/// and needed one more call to see the end.
fn read_up_to(
    file: &mut std::fs::File,
    want: usize,
    buffer: &mut Vec<u8>,
) -> std::io::Result<usize> {
    if buffer.len() < want {
        buffer.resize(want, 0);
    }
    let mut filled = 0;
    while filled < want {
        match file.read(&mut buffer[filled..want]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Whether `bytes` hold a NUL byte, so the file is binary and not searched.
/// The searcher looks only at the start of a slice; read through a reader
/// it saw every byte, and so does this. UTF-16 text (with its byte-order
/// mark) is full of NULs and is left to the searcher, which transcodes it.
fn is_binary(bytes: &[u8]) -> bool {
    let utf16 = bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]);
    !utf16 && bytes.contains(&0)
}

struct Collect<'a> {
    result: &'a mut FileResult,
    limit: usize,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let line = mat.line_number().unwrap_or(0);
        self.result.matches.push((line, display_line(mat.bytes())));
        // One more than the limit is enough to know the answer is truncated.
        Ok(self.result.matches.len() <= self.limit)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.result.binary = true;
        Ok(false)
    }
}

/// A matched line as shown: decoded leniently (Windows trees hold Latin-1
/// files), indentation and line ending dropped, at most 300 characters.
pub(super) fn display_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']).trim_start();
    match text.char_indices().nth(MAX_MATCH_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}
