//! System queries that may never answer (WMI behind a wedged service, a
//! driver stuck in a call), bounded in time.
//!
//! A query runs on a thread of its own and the caller waits at most the
//! gate's limit. A thread cannot be stopped from outside, so one that
//! overruns is left to finish and counted as hung; while any query of the
//! gate is hung, the gate refuses new ones at once instead of stacking up
//! threads behind the same stuck service. The thread clears its count when
//! it finally returns, and the gate opens again.

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A kind of query with its limit and its hung ones.
pub struct Gate {
    name: &'static str,
    limit: Duration,
    /// When the oldest query still hung was started, and how many are.
    hung: Mutex<Option<(Instant, usize)>>,
}

/// A started query, as its thread and its caller both see it.
enum Phase {
    Running,
    Done,
    /// The caller stopped waiting; the thread owes the gate its count.
    Abandoned,
}

impl Gate {
    /// A gate for queries named `name` (the first words of its errors),
    /// each waited for at most `limit`.
    pub const fn new(name: &'static str, limit: Duration) -> Gate {
        Gate {
            name,
            limit,
            hung: Mutex::new(None),
        }
    }

    /// Runs `query` and returns its answer, or an error saying it did not
    /// answer within the limit or that an earlier one still has not.
    pub fn run<T: Send + 'static>(
        &'static self,
        query: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        if let Some((since, count)) = *self.hung() {
            return Err(format!(
                "{}: not asked, because {count} earlier quer{} started {} s ago ha{} not answered yet",
                self.name,
                if count == 1 { "y" } else { "ies" },
                since.elapsed().as_secs(),
                if count == 1 { "s" } else { "ve" },
            ));
        }
        let phase = Arc::new(Mutex::new(Phase::Running));
        let (send, answer) = channel();
        let theirs = phase.clone();
        let started = Instant::now();
        std::thread::Builder::new()
            .name(format!("wamcp {}", self.name))
            .spawn(move || {
                // Settles the count even when the query panics.
                let _finish = Finish {
                    gate: self,
                    phase: theirs,
                };
                let _ = send.send(query());
            })
            .map_err(|e| format!("{}: could not start a thread: {e}", self.name))?;
        match answer.recv_timeout(self.limit) {
            Ok(result) => result,
            Err(RecvTimeoutError::Disconnected) => {
                Err(format!("{}: the query failed without an answer", self.name))
            }
            Err(RecvTimeoutError::Timeout) => {
                let mut phase = lock(&phase);
                if matches!(*phase, Phase::Done) {
                    // It answered between the timeout and this lock.
                    return answer.try_recv().unwrap_or_else(|_| {
                        Err(format!("{}: the query failed without an answer", self.name))
                    });
                }
                *phase = Phase::Abandoned;
                let mut hung = self.hung();
                *hung = Some(match *hung {
                    Some((since, count)) => (since, count + 1),
                    None => (started, 1),
                });
                Err(format!(
                    "{}: no answer within {} s",
                    self.name,
                    self.limit.as_secs_f64()
                ))
            }
        }
    }

    fn release(&self) {
        let mut hung = self.hung();
        *hung = match *hung {
            Some((since, count)) if count > 1 => Some((since, count - 1)),
            _ => None,
        };
    }

    fn hung(&self) -> MutexGuard<'_, Option<(Instant, usize)>> {
        lock(&self.hung)
    }
}

/// The end of a query's thread, however it ends: an abandoned query gives
/// the gate back its count, so a late panic cannot close it for good.
struct Finish {
    gate: &'static Gate,
    phase: Arc<Mutex<Phase>>,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let mut phase = lock(&self.phase);
        if matches!(*phase, Phase::Abandoned) {
            self.gate.release();
        }
        *phase = Phase::Done;
    }
}

/// A poisoned lock still guards plain data that is never left half-written.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_in_time_is_returned_and_errors_pass_through() {
        static GATE: Gate = Gate::new("test query", Duration::from_secs(30));
        assert_eq!(GATE.run(|| Ok(7)), Ok(7));
        assert_eq!(
            GATE.run(|| Err::<u8, _>("WMI: access denied".into())),
            Err("WMI: access denied".into())
        );
        assert_eq!(
            GATE.run(|| -> Result<u8, String> { panic!("inside the query") }),
            Err("test query: the query failed without an answer".into())
        );
    }

    #[test]
    fn a_hung_query_closes_the_gate_until_it_returns() {
        static GATE: Gate = Gate::new("WMI", Duration::from_millis(50));
        let (release, held) = channel::<()>();
        assert_eq!(
            GATE.run(move || {
                let _ = held.recv();
                Ok(1)
            }),
            Err("WMI: no answer within 0.05 s".into())
        );
        // While it hangs, nothing more is started.
        let asked = GATE.run(|| Ok(2)).unwrap_err();
        assert!(
            asked.starts_with("WMI: not asked, because 1 earlier query started "),
            "{asked}"
        );
        // Once it returns, the gate opens again.
        release.send(()).unwrap();
        // Polled, not timed: the thread clears its count when it gets there.
        let reopened = (0..3000).find_map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            GATE.run(|| Ok(3)).ok()
        });
        assert_eq!(reopened, Some(3));
    }

    #[test]
    fn a_query_that_panics_after_its_time_still_reopens_the_gate() {
        static GATE: Gate = Gate::new("WMI", Duration::from_millis(50));
        let (release, held) = channel::<()>();
        assert!(
            GATE.run(move || -> Result<u8, String> {
                let _ = held.recv();
                panic!("late failure")
            })
            .is_err()
        );
        release.send(()).unwrap();
        let reopened = (0..3000).find_map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            GATE.run(|| Ok(4)).ok()
        });
        assert_eq!(reopened, Some(4));
    }
}
