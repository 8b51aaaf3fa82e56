//! The blocking pool, shared so that no one kind of call can fill it.
//!
//! File reads, walks, audit appends and desktop calls all run on the
//! runtime's blocking threads (sixteen for a stdio server). Work that
//! cannot be cut short once started (a read stuck on a network drive, an
//! append waiting for the trail's lock) holds its thread until it ends, so
//! sixteen of one kind would leave every other tool without a thread. Each
//! kind gets a lane of [`PER_KIND`] threads; a call over that waits, off
//! the pool, for one of its own kind to finish.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;
use tokio::task::JoinError;

/// Threads one kind of work may hold at once: a quarter of the stdio pool.
pub const PER_KIND: usize = 4;

/// The lane of audit trail appends.
pub const AUDIT: &str = "audit trail";

fn lane(kind: &'static str) -> Arc<Semaphore> {
    static LANES: Mutex<Option<HashMap<&'static str, Arc<Semaphore>>>> = Mutex::new(None);
    let mut lanes = LANES.lock().unwrap_or_else(|e| e.into_inner());
    lanes
        .get_or_insert_with(HashMap::new)
        .entry(kind)
        .or_insert_with(|| Arc::new(Semaphore::new(PER_KIND)))
        .clone()
}

/// Runs `work` on the blocking pool within `kind`'s lane. The lane's place
/// is given back when the work ends, not when the caller stops waiting: a
/// cancelled call's work still counts while it runs.
pub async fn run<T: Send + 'static>(
    kind: &'static str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, JoinError> {
    // The semaphore is never closed, so acquiring cannot fail.
    let permit = lane(kind).acquire_owned().await.ok();
    tokio::task::spawn_blocking(move || {
        let _place = permit;
        work()
    })
    .await
}

/// [`run`] for work that answers an I/O result.
pub async fn blocking_io<T: Send + 'static>(
    kind: &'static str,
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    run(kind, work)
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Work of one kind never holds more than its lane; another kind
    /// still runs while that lane is full.
    #[tokio::test(flavor = "current_thread")]
    async fn one_kind_holds_at_most_its_lane() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let hold = Arc::new(Mutex::new(hold));
        let mut calls = Vec::new();
        for _ in 0..PER_KIND * 3 {
            let (running, most, hold) = (running.clone(), most.clone(), hold.clone());
            calls.push(tokio::spawn(run("test: stuck", move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                let _ = hold
                    .lock()
                    .unwrap()
                    .recv_timeout(std::time::Duration::from_secs(30));
                running.fetch_sub(1, Ordering::SeqCst);
            })));
        }
        // Another kind is served while the first lane is full.
        assert_eq!(run("test: other", || 7).await.unwrap(), 7);
        for _ in 0..PER_KIND * 3 {
            release.send(()).unwrap();
        }
        for call in calls {
            call.await.unwrap().unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= PER_KIND);
    }
}
