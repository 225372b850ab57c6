//! Locks that never hide a panic. A lock is poisoned when a thread panicked while holding it;
//! ignoring that (`if let Ok(..) = lock()`) would make findings quietly vanish and rows turn
//! "not exercised". These helpers take the data anyway (it is plain bookkeeping, still usable)
//! and record that a poisoning happened; the evaluation asks [`poisoned`] at the end and reports
//! the run as an internal error (exit status 4) instead of passing on partial evidence.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static POISONED: AtomicBool = AtomicBool::new(false);

fn recover<G>(error: PoisonError<G>) -> G {
    POISONED.store(true, Ordering::SeqCst);
    error.into_inner()
}

/// Locks `mutex`, recording a poisoning instead of hiding it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(recover)
}

/// Read-locks `lock`, recording a poisoning instead of hiding it.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(recover)
}

/// Write-locks `lock`, recording a poisoning instead of hiding it.
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(recover)
}

/// True once any lock taken through this module was found poisoned in this process.
pub(crate) fn poisoned() -> bool {
    POISONED.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_gives_its_data_and_is_recorded() {
        let shared = std::sync::Arc::new(Mutex::new(vec![1]));
        let clone = shared.clone();
        let _ = std::thread::spawn(move || {
            let _guard = clone.lock().expect("first lock");
            panic!("a panic while holding the lock");
        })
        .join();
        assert!(shared.is_poisoned());
        lock(&shared).push(2);
        assert_eq!(*lock(&shared), [1, 2]);
        assert!(poisoned());
    }
}
