//! `read_file`: a window of a text file, as plain text.
//!
//! The file is streamed, never loaded whole, so a multi-gigabyte log costs
//! one pass. Lines are returned without their line terminators' `\r`: a JSON
//! transport escapes every `\r` to two characters, which on a CRLF file is a
//! few thousand tokens per call for nothing (`edit_file` restores endings).

use crate::paths::{input_path, io_error, quoted};
use encoding_rs::{UTF_16BE, UTF_16LE};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{
    DEFAULT_READ_LINES, MAX_COUNT_BYTES, MAX_READ_BYTES, READ_SCAN_SECONDS, clamp_request,
};

/// How much of the start of a file is checked for binary content.
const SNIFF_BYTES: usize = 8 * 1024;

/// How far one read may go: a clock for all of it, a byte budget for
/// counting the lines after the window, and the caller's cancellation.
pub struct Scan<'a> {
    /// How long the whole read may take,
    /// counting the lines after the window too.
    pub time: Duration,
    /// Bytes after the window read to count the
    /// file's lines; past it, "more than N".
    pub count_bytes: u64,
    /// Whether the caller gave up; checked as the read goes, so it stops early.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Places refused (`SECRET_PATH`); the default refuses nothing.
    pub secrets: &'a crate::Secrets,
}

impl Default for Scan<'_> {
    fn default() -> Self {
        Scan {
            time: Duration::from_secs(READ_SCAN_SECONDS),
            count_bytes: MAX_COUNT_BYTES,
            cancelled: &never,
            secrets: &NOTHING_SECRET,
        }
    }
}

static NOTHING_SECRET: std::sync::LazyLock<crate::Secrets> =
    std::sync::LazyLock::new(crate::Secrets::default);

fn never() -> bool {
    false
}

/// Reads lines `start_line..start_line + max_lines` of `path_arg` (1-based;
/// values below 1 mean 1), at most 2000 lines and 256 KiB, within the
/// default [`Scan`].
pub fn read_file(
    path_arg: &str,
    cwd: &Path,
    start_line: i64,
    max_lines: i64,
) -> Result<String, ToolError> {
    read_file_within(path_arg, cwd, start_line, max_lines, &Scan::default())
}

/// The size of the file `path_arg` names, when it can be read cheaply:
/// lets a caller keep reads of small files apart from long scans.
pub fn size_hint(path_arg: &str, cwd: &Path) -> Option<u64> {
    let path = input_path(path_arg, cwd).ok()?;
    std::fs::metadata(path).ok().map(|m| m.len())
}

/// [`read_file`] within `scan`.
pub fn read_file_within(
    path_arg: &str,
    cwd: &Path,
    start_line: i64,
    max_lines: i64,
    scan: &Scan,
) -> Result<String, ToolError> {
    let path = input_path(path_arg, cwd)?;
    crate::secrets::refuse_secret(scan.secrets, path_arg, &path, "the user did not allow it")?;
    let file = open_file(path_arg, &path)?;
    // Judged again as opened: a link swapped in between the check and the
    // open (by a command running meanwhile) must not lead to a key.
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(opened) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            crate::secrets::refuse_secret(
                scan.secrets,
                path_arg,
                &opened,
                "the user did not allow it",
            )?;
        }
    }
    let start = start_line.max(1) as u64;
    let requested_lines = max_lines;
    let (max_lines, capped) = clamp_request(max_lines, DEFAULT_READ_LINES as u64);
    let meter = Arc::new(Meter::new(scan));
    let fail = Failure {
        path_arg,
        scan,
        meter: &meter,
    };
    let mut reader = open_sniffed(file, &meter, scan, &fail)?;
    let window = read_window(&mut reader, &meter, &fail, start, max_lines)?;
    let (total, beyond) = count_total(&mut reader, &meter, path_arg, &window)?;
    if window.shown == 0 {
        return nothing_shown(path_arg, start, total);
    }
    let Window {
        mut out,
        shown,
        stop,
        ..
    } = window;
    let ending = Ending {
        path_arg,
        start,
        last_shown: start + shown.saturating_sub(1),
        total,
        beyond,
        stop,
    };
    let mut notes = Vec::new();
    if capped {
        notes.push(cap_note(max_lines, requested_lines));
    }
    notes.extend(ending.note(capped, scan));
    for note in notes {
        out.push_str(&format!("[{note}]\n"));
    }
    Ok(out)
}

/// Opens the file `path_arg` names, refusing a directory (saying what to
/// use instead) and anything that is not a regular file.
fn open_file(path_arg: &str, path: &Path) -> Result<File, ToolError> {
    let meta =
        std::fs::metadata(path).map_err(|e| io_error(path_arg, path, &e, ErrorType::ReadFailed))?;
    if meta.is_dir() {
        return Err(ToolError::new(
            ErrorType::PathIsNotFile,
            format!("'{path_arg}' is a directory, not a file."),
        )
        .with_path(path_arg)
        .recover(
            "Use list_directory to see its contents, or find_files to locate a file by name.",
        ));
    }
    crate::regular::open_regular(path)
        .map_err(|e| io_error(path_arg, path, &e, ErrorType::ReadFailed))
}

/// Wraps `file` in a metered text reader and refuses it when its first
/// bytes show it is not text.
fn open_sniffed<'a>(
    file: File,
    meter: &Arc<Meter>,
    scan: &Scan<'a>,
    fail: &Failure,
) -> Result<Box<dyn BufRead + 'a>, ToolError> {
    let metered = Metered {
        file,
        meter: meter.clone(),
        cancelled: scan.cancelled,
    };
    let (mut reader, utf8) = open_text(metered).map_err(|e| fail.of(e))?;
    // Past the first buffer, a NUL byte in UTF-8 means binary data: a
    // sparse file's hole reads as zeros, terabytes of them for free.
    meter.nul_is_binary.store(utf8, Ordering::Relaxed);
    let sample = reader.fill_buf().map_err(|e| fail.of(e))?;
    let sample = &sample[..sample.len().min(SNIFF_BYTES)];
    if sample.contains(&0) {
        return Err(not_text(fail.path_arg, sample));
    }
    Ok(reader)
}

/// Turns an error from the [`Metered`] reader into the refusal for it:
/// the cut the [`Meter`] made, or the read error itself.
struct Failure<'a> {
    path_arg: &'a str,
    scan: &'a Scan<'a>,
    meter: &'a Meter,
}

impl Failure<'_> {
    /// The refusal for `e`.
    fn of(&self, e: std::io::Error) -> ToolError {
        match Meter::why(&e) {
            Some(Cut::Cancelled) => cancelled(),
            Some(Cut::Time) => too_slow(self.path_arg, self.scan.time, line_no_seen(self.meter)),
            Some(Cut::Binary) => binary_after(self.path_arg, line_no_seen(self.meter)),
            _ => read_failed(self.path_arg, &e),
        }
    }
}

/// The lines read for the answer, and where reading them stopped.
struct Window {
    /// The lines shown, each ending in `\n`.
    out: String,
    /// The number of the last line read; after [`Stop::Bytes`], of the
    /// last one shown (the line that did not fit was read too).
    line_no: u64,
    /// How many lines `out` holds.
    shown: u64,
    stop: Stop,
}

impl Window {
    /// Ends the window at a line that does not fit in what is left of the
    /// byte budget; `bytes` is the line's whole length.
    fn stop_short(&mut self, text: &str, bytes: usize, turns_binary: bool) {
        if self.shown == 0 {
            // One line larger than the whole budget: show its head rather than nothing.
            let cut = floor_char_boundary(text, MAX_READ_BYTES - 1);
            self.out.push_str(&text[..cut]);
            self.out.push('\n');
            self.shown = 1;
            self.stop = Stop::LineCut {
                line: self.line_no,
                bytes,
                kept: cut,
                turns_binary,
            };
        } else {
            self.stop = Stop::Bytes;
            self.line_no -= 1;
        }
    }
}

/// Reads lines until the window from line `start` holds `max_lines`
/// lines, the per-call byte budget is spent, or the file ends.
fn read_window(
    reader: &mut dyn BufRead,
    meter: &Meter,
    fail: &Failure,
    start: u64,
    max_lines: u64,
) -> Result<Window, ToolError> {
    let mut window = Window {
        out: String::new(),
        line_no: 0,
        shown: 0,
        stop: Stop::EndOfFile,
    };
    let mut line = Vec::new();
    while let Some((rest, turns_binary)) =
        next_line(reader, &mut line, fail, window.line_no + 1 >= start)?
    {
        window.line_no += 1;
        meter.lines.store(window.line_no, Ordering::Relaxed);
        if window.line_no < start {
            continue;
        }
        let text = line_text(fail.path_arg, &line, rest)?;
        if window.out.len() + text.len() + 1 > MAX_READ_BYTES {
            window.stop_short(text, line.len() + rest, turns_binary);
            break;
        }
        window.out.push_str(text);
        window.out.push('\n');
        window.shown += 1;
        if window.shown == max_lines {
            window.stop = Stop::Lines;
            break;
        }
    }
    Ok(window)
}

/// Reads the next line into `line`, or answers `None` at the end of the
/// file. Answers how many bytes of the line were skipped past what was
/// kept, and whether it ran into binary data; `in_window` says whether the
/// line is one to show, where binary data ends the line rather than the read.
fn next_line(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    fail: &Failure,
    in_window: bool,
) -> Result<Option<(usize, bool)>, ToolError> {
    line.clear();
    // At most one budget (and a byte) of a line is kept: a file with no
    // line breaks (a sparse one is terabytes of zeros for free) must not
    // be held in memory whole.
    let n = std::io::Read::take(&mut *reader, MAX_READ_BYTES as u64 + 1)
        .read_until(b'\n', line)
        .map_err(|e| fail.of(e))?;
    if n == 0 {
        return Ok(None);
    }
    // A line that runs into binary data (a hole) ends where it does.
    if line.last() != Some(&b'\n') && n > MAX_READ_BYTES {
        match skip_line(reader) {
            Ok(rest) => Ok(Some((rest, false))),
            Err((rest, e)) if Meter::why(&e) == Some(Cut::Binary) && in_window => {
                Ok(Some((rest, true)))
            }
            Err((_, e)) => Err(fail.of(e)),
        }
    } else {
        Ok(Some((0, false)))
    }
}

/// The text of a line [`next_line`] read, without its line break; `rest`
/// is how many bytes of it were skipped.
fn line_text<'l>(path_arg: &str, line: &'l [u8], rest: usize) -> Result<&'l str, ToolError> {
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        // Cut inside a character by the cap in `next_line`: keep what is whole.
        Err(e) if rest > 0 && e.error_len().is_none() => {
            std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Err(not_text(path_arg, line)),
    };
    let text = text.strip_suffix('\n').unwrap_or(text);
    Ok(text.strip_suffix('\r').unwrap_or(text))
}

/// The file's line count once the window is read, and why counting
/// stopped early if it did: exact when reading reached the end, else the
/// rest is counted within the [`Scan`], a lower bound when it runs out.
fn count_total(
    reader: &mut dyn BufRead,
    meter: &Meter,
    path_arg: &str,
    window: &Window,
) -> Result<(u64, Option<Cut>), ToolError> {
    // Lines already read past the window (the one that did not fit) plus the rest.
    let read_past = match window.stop {
        Stop::EndOfFile => None,
        Stop::Bytes => Some(window.line_no + 1),
        Stop::Lines | Stop::LineCut { .. } => Some(window.line_no),
    };
    let total = match read_past {
        None => Total::Exact(window.line_no),
        Some(known) => {
            meter.start_counting();
            match count_lines(reader) {
                Ok(more) => Total::Exact(known + more),
                Err((more, e)) => match Meter::why(&e) {
                    Some(Cut::Cancelled) => return Err(cancelled()),
                    Some(cut) => Total::AtLeast(known + more, cut),
                    None => return Err(read_failed(path_arg, &e)),
                },
            }
        }
    };
    Ok(match total {
        Total::Exact(n) => (n, None),
        Total::AtLeast(n, cut) => (n, Some(cut)),
    })
}

/// The answer when no line is shown: the file is empty, or `start` is
/// past its end.
fn nothing_shown(path_arg: &str, start: u64, total: u64) -> Result<String, ToolError> {
    if total == 0 {
        return Ok(format!("[{path_arg} is empty: 0 lines]\n"));
    }
    Err(ToolError::new(
        ErrorType::StartLineOutOfRange,
        format!("start_line {start} is past the end of '{path_arg}', which has {total} lines."),
    )
    .with_path(path_arg)
    .detail("total_lines", total)
    .recover(format!("Use a start_line between 1 and {total}.")))
}

/// The note for a `max_lines` outside `1..=DEFAULT_READ_LINES`.
fn cap_note(max_lines: u64, requested_lines: i64) -> String {
    if max_lines == 1 {
        format!("max_lines below 1 reads one line; asked for {requested_lines}.")
    } else {
        format!("max_lines is limited to {DEFAULT_READ_LINES} per call.")
    }
}

/// The call that reads on from line `from`.
fn next_call(path_arg: &str, from: u64) -> String {
    format!("read_file(path={}, start_line={from})", quoted(path_arg))
}

/// Where a read that showed lines ended, for the note after them.
struct Ending<'a> {
    path_arg: &'a str,
    /// The first line shown.
    start: u64,
    /// The last line shown.
    last_shown: u64,
    /// The file's line count; a lower bound when `beyond` is set.
    total: u64,
    /// Why counting the lines stopped before the end, if it did.
    beyond: Option<Cut>,
    stop: Stop,
}

impl Ending<'_> {
    /// The note saying which lines were shown and how to read on, if one is
    /// needed; `capped` says whether `max_lines` was clamped.
    fn note(&self, capped: bool, scan: &Scan) -> Option<String> {
        let (start, last_shown, total) = (self.start, self.last_shown, self.total);
        let of = match self.beyond {
            None => total.to_string(),
            Some(cut) => format!("more than {total} ({})", cut.counted(scan)),
        };
        let continues = self.beyond.is_some() || last_shown < total;
        match self.stop {
            Stop::EndOfFile if start > 1 || capped => Some(format!(
                "Lines {start}-{last_shown} of {total}; this is the end of the file."
            )),
            Stop::EndOfFile => None,
            Stop::Lines | Stop::Bytes if continues => {
                let why = if matches!(self.stop, Stop::Bytes) {
                    " (the 256 KiB per-call limit)"
                } else {
                    ""
                };
                Some(format!(
                    "Lines {start}-{last_shown} of {of}{why}. Next: {}.",
                    next_call(self.path_arg, last_shown + 1)
                ))
            }
            Stop::Lines | Stop::Bytes => Some(format!(
                "Lines {start}-{last_shown} of {total}; this is the end of the file."
            )),
            Stop::LineCut {
                line,
                bytes,
                kept,
                turns_binary,
            } => Some(self.line_cut_note(line, bytes, kept, turns_binary)),
        }
    }

    /// The note for a single line longer than the byte budget, of which
    /// only the head was shown.
    fn line_cut_note(&self, line: u64, bytes: usize, kept: usize, turns_binary: bool) -> String {
        if turns_binary {
            return format!(
                "Line {line} is more than {bytes} bytes long and then turns to binary data (NUL bytes); only its \
                 first {kept} bytes are shown (256 KiB per call)."
            );
        }
        let rest = if line < self.total || self.beyond.is_some() {
            format!(" Later lines: call {}.", next_call(self.path_arg, line + 1))
        } else {
            String::new()
        };
        format!(
            "Line {line} is {bytes} bytes long; only its first {kept} bytes are shown (256 KiB per call). \
             Use search_files to find text inside it.{rest}"
        )
    }
}

/// The number of lines, or a lower bound when counting was cut short.
enum Total {
    Exact(u64),
    AtLeast(u64, Cut),
}

/// Why reading stopped before the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Time,
    Bytes,
    Cancelled,
    Binary,
}

impl Cut {
    fn counted(self, scan: &Scan) -> String {
        match self {
            Cut::Bytes => format!(
                "counting stopped after {} MiB past the lines shown",
                scan.count_bytes / (1024 * 1024)
            ),
            Cut::Binary => "counting stopped where the file turns to binary data".to_string(),
            _ => format!("counting stopped after {} s", scan.time.as_secs()),
        }
    }
}

/// The raw bytes read so far against a [`Scan`]: the clock always runs;
/// the byte budget starts when counting does.
struct Meter {
    deadline: Instant,
    count_bytes: u64,
    counting_from: AtomicU64,
    read: AtomicU64,
    counting: AtomicBool,
    /// The last line number read, for a message.
    lines: AtomicU64,
    /// Whether a NUL byte ends the reading (UTF-8 text).
    nul_is_binary: AtomicBool,
}

impl Meter {
    fn new(scan: &Scan) -> Meter {
        Meter {
            deadline: Instant::now() + scan.time,
            count_bytes: scan.count_bytes,
            counting_from: AtomicU64::new(0),
            read: AtomicU64::new(0),
            counting: AtomicBool::new(false),
            lines: AtomicU64::new(0),
            nul_is_binary: AtomicBool::new(false),
        }
    }

    fn start_counting(&self) {
        self.counting_from
            .store(self.read.load(Ordering::Relaxed), Ordering::Relaxed);
        self.counting.store(true, Ordering::Relaxed);
    }

    /// The cut to report before reading more, if any.
    fn check(&self, cancelled: &dyn Fn() -> bool) -> Option<Cut> {
        if cancelled() {
            return Some(Cut::Cancelled);
        }
        if Instant::now() >= self.deadline {
            return Some(Cut::Time);
        }
        let counted =
            self.read.load(Ordering::Relaxed) - self.counting_from.load(Ordering::Relaxed);
        (self.counting.load(Ordering::Relaxed) && counted >= self.count_bytes).then_some(Cut::Bytes)
    }

    /// The cut an error from a [`Metered`] reader carries.
    fn why(error: &std::io::Error) -> Option<Cut> {
        error.get_ref()?.downcast_ref::<CutError>().map(|e| e.0)
    }
}

#[derive(Debug)]
struct CutError(Cut);

impl std::fmt::Display for CutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reading stopped: {:?}", self.0)
    }
}

impl std::error::Error for CutError {}

/// The file, read through its [`Meter`].
struct Metered<'a> {
    file: File,
    meter: Arc<Meter>,
    cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl std::io::Read for Metered<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(cut) = self.meter.check(self.cancelled) {
            return Err(std::io::Error::other(CutError(cut)));
        }
        let n = std::io::Read::read(&mut self.file, buf)?;
        self.meter.read.fetch_add(n as u64, Ordering::Relaxed);
        if self.meter.nul_is_binary.load(Ordering::Relaxed)
            && memchr::memchr(0, &buf[..n]).is_some()
        {
            return Err(std::io::Error::other(CutError(Cut::Binary)));
        }
        Ok(n)
    }
}

fn line_no_seen(meter: &Meter) -> u64 {
    meter.lines.load(Ordering::Relaxed)
}

fn cancelled() -> ToolError {
    ToolError::new(
        ErrorType::Cancelled,
        "The request was cancelled; reading stopped.",
    )
}

fn binary_after(shown: &str, line: u64) -> ToolError {
    ToolError::new(
        ErrorType::InvalidTextEncoding,
        format!("'{shown}' turns to binary data (NUL bytes) after line {line}."),
    )
    .with_path(shown)
    .recover(format!(
        "Read lines up to {line} only, or use search_files to find text in the file."
    ))
}

fn too_slow(shown: &str, time: Duration, reached: u64) -> ToolError {
    ToolError::new(
        ErrorType::ReadFailed,
        format!(
            "Reading '{shown}' did not reach the lines asked for within {} s (it got to line {reached}).",
            time.as_secs()
        ),
    )
    .with_path(shown)
    .recover("Use search_files to find the text you need in it, then read_file near the line it names.")
}

enum Stop {
    EndOfFile,
    Lines,
    Bytes,
    LineCut {
        line: u64,
        bytes: usize,
        kept: usize,
        /// The line ran into binary data before its end.
        turns_binary: bool,
    },
}

/// Wraps the file in a reader that yields UTF-8: a UTF-8 BOM is skipped and
/// UTF-16 with a BOM (what Windows PowerShell 5 writes) is transcoded.
/// Also answers whether the text is UTF-8.
fn open_text<'a>(file: Metered<'a>) -> std::io::Result<(Box<dyn BufRead + 'a>, bool)> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf()?;
    let encoding = if head.starts_with(&[0xFF, 0xFE]) {
        Some(UTF_16LE)
    } else if head.starts_with(&[0xFE, 0xFF]) {
        Some(UTF_16BE)
    } else {
        if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
            reader.consume(3);
        }
        None
    };
    Ok(match encoding {
        None => (Box::new(reader), true),
        Some(encoding) => (
            Box::new(BufReader::with_capacity(
                64 * 1024,
                encoding_rs_io::DecodeReaderBytesBuilder::new()
                    .encoding(Some(encoding))
                    .build(reader),
            )),
            false,
        ),
    })
}

/// Counts the lines left in `reader`; a final line without a terminator counts.
/// Reads past the rest of a line without keeping it; answers how many
/// bytes it had, its line break not counted.
/// On an error, answers the bytes skipped before it too.
fn skip_line(reader: &mut dyn BufRead) -> Result<usize, (usize, std::io::Error)> {
    let mut skipped = 0;
    loop {
        let buf = reader.fill_buf().map_err(|e| (skipped, e))?;
        if buf.is_empty() {
            return Ok(skipped);
        }
        if let Some(at) = memchr::memchr(b'\n', buf) {
            reader.consume(at + 1);
            return Ok(skipped + at);
        }
        let len = buf.len();
        skipped += len;
        reader.consume(len);
    }
}

/// On an error, answers the lines counted before it too.
fn count_lines(reader: &mut dyn BufRead) -> Result<u64, (u64, std::io::Error)> {
    let mut count = 0u64;
    let mut last = None;
    loop {
        let buf = reader.fill_buf().map_err(|e| (count, e))?;
        if buf.is_empty() {
            break;
        }
        count += memchr::memchr_iter(b'\n', buf).count() as u64;
        last = buf.last().copied();
        let len = buf.len();
        reader.consume(len);
    }
    Ok(count + u64::from(last.is_some_and(|b| b != b'\n')))
}

/// The largest index `<= max` that is a char boundary (backs off at most 3 bytes).
fn floor_char_boundary(text: &str, max: usize) -> usize {
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

fn read_failed(shown: &str, error: &std::io::Error) -> ToolError {
    ToolError::new(
        ErrorType::ReadFailed,
        format!("Reading '{shown}' failed: {error}."),
    )
    .with_path(shown)
    .retryable(
        "Retry once; if it fails again, the file or its disk has a problem the user must look at.",
    )
}

/// The refusal for bytes that are not UTF-8 text, saying what they look like.
fn not_text(shown: &str, sample: &[u8]) -> ToolError {
    let (looks_like, advice) = describe_non_utf8(sample);
    ToolError::new(
        ErrorType::InvalidTextEncoding,
        format!("'{shown}' is not UTF-8 text: it looks like {looks_like}."),
    )
    .with_path(shown)
    .detail("looks_like", looks_like)
    .recover(advice)
}

/// A guess at what non-UTF-8 bytes are, and what to do about them.
pub(crate) fn describe_non_utf8(sample: &[u8]) -> (&'static str, &'static str) {
    let nuls = sample.iter().filter(|&&b| b == 0).count();
    if nuls > 0 {
        let pairs = sample.len() / 2;
        let even = sample.iter().step_by(2).filter(|&&b| b == 0).count();
        let odd = sample
            .iter()
            .skip(1)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count();
        // ASCII-heavy UTF-16 has a NUL in every other byte and almost none in between.
        if pairs >= 2 && odd * 10 >= pairs * 7 && even * 10 <= pairs {
            return (
                "UTF-16 little-endian text without a byte-order mark",
                UTF16_ADVICE,
            );
        }
        if pairs >= 2 && even * 10 >= pairs * 7 && odd * 10 <= pairs {
            return (
                "UTF-16 big-endian text without a byte-order mark",
                UTF16_ADVICE,
            );
        }
        return (
            "binary data (it contains NUL bytes)",
            "This is not a text file; do not read it with read_file. Use find_files or list_directory to find the source you want.",
        );
    }
    (
        "text in a legacy 8-bit encoding such as Windows-1252 or Latin-1",
        "Ask the user to convert it to UTF-8, or use search_files, which reads such files leniently, to find the lines you need.",
    )
}

const UTF16_ADVICE: &str = "Ask the user to re-save it as UTF-8 or as UTF-16 with a byte-order mark; search_files cannot read it either.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_utf8_descriptions() {
        let le: Vec<u8> = "hello world"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let be: Vec<u8> = "hello world"
            .encode_utf16()
            .flat_map(|u| u.to_be_bytes())
            .collect();
        assert!(describe_non_utf8(&le).0.starts_with("UTF-16 little-endian"));
        assert!(describe_non_utf8(&be).0.starts_with("UTF-16 big-endian"));
        assert!(
            describe_non_utf8(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0")
                .0
                .starts_with("binary")
        );
        assert!(
            describe_non_utf8(b"caf\xe9 cr\xe8me")
                .0
                .contains("Windows-1252")
        );
    }

    #[test]
    fn char_boundary_backs_off_at_most_three_bytes() {
        let text = "aé€😀";
        assert_eq!(floor_char_boundary(text, 2), 1);
        assert_eq!(floor_char_boundary(text, 4), 3);
        assert_eq!(floor_char_boundary(text, 7), 6);
        assert_eq!(floor_char_boundary(text, 100), text.len());
    }
}
