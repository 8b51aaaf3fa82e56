//! How much time a walk or a search may take. A tree of any size is
//! answered completely when the work fits the budget; when it does not, the
//! answer says exactly how far it got, and what it lists is a prefix, in
//! path order, of the complete answer.

use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// When work must stop. The production budget is a [`Deadline`]; tests use
/// budgets that run out after a fixed number of files, which a clock cannot.
pub trait Budget: Sync {
    /// Whether work must stop before starting on file number `started`
    /// (0-based, in path order; the walk asks with 0).
    fn exhausted(&self, started: usize) -> bool;
    /// The budget in words, for the notice of an answer it cut ("10 s").
    fn describe(&self) -> String;
}

/// A wall-clock budget that starts when it is made.
pub struct Deadline {
    at: Instant,
    limit: Duration,
}

impl Deadline {
    /// A budget of `limit` from now.
    pub fn starting_now(limit: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + limit,
            limit,
        }
    }
}

impl Budget for Deadline {
    fn exhausted(&self, _started: usize) -> bool {
        Instant::now() >= self.at
    }

    fn describe(&self) -> String {
        format!("{} s", self.limit.as_secs_f64())
    }
}

/// The bounds of one walk or search: its budget, a counter of files done
/// that a caller may report as progress, and (for tests) the thread count.
pub struct Bounds<'a> {
    /// When the work must stop.
    pub budget: &'a dyn Budget,
    /// Files listed (`find_files`) or searched (`search_files`) so far.
    pub progress: &'a AtomicUsize,
    /// Worker threads; `None` for one per CPU.
    pub threads: Option<usize>,
    /// Places the walk neither lists nor searches.
    pub secrets: &'a crate::Secrets,
}
