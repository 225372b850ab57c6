//! SIGINT and SIGTERM as a future: a run selects on it so the reports are still written when the
//! user presses Ctrl-C or the runner cancels the job.
//!
//! [`install`] registers the handlers once, first thing in `run` and `action`, before anything
//! can block: a signal that arrives while the settings are read or the comment is posted is
//! kept, and every later [`interrupt_signal`] resolves at once with it. Other commands (the demo
//! server, `golden init`) keep the default actions.

use std::sync::OnceLock;

use tokio::sync::watch;

use crate::verdict::Interrupt;

/// The first signal received since [`install`], `None` before one arrives.
static RECEIVED: OnceLock<watch::Receiver<Option<Interrupt>>> = OnceLock::new();

/// Registers the SIGINT and SIGTERM handlers and starts the task that records the first signal.
/// Call it inside the runtime; a second call does nothing. Where the handlers cannot be
/// registered, signals keep their default actions and [`interrupt_signal`] never resolves.
pub(crate) fn install() {
    use tokio::signal::unix::{SignalKind, signal};
    if RECEIVED.get().is_some() {
        return;
    }
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return;
    };
    let (sender, receiver) = watch::channel(None);
    if RECEIVED.set(receiver).is_err() {
        return;
    }
    tokio::spawn(async move {
        let first = tokio::select! {
            _ = interrupt.recv() => Interrupt::Int,
            _ = terminate.recv() => Interrupt::Term,
        };
        let _ = sender.send(Some(first));
        // Later signals change nothing: the first one decides the exit status. Keep the
        // handlers (and the sender) alive so they are not turned back into default actions.
        loop {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
    });
}

/// The first signal received since [`install`], if any (`None` without [`install`]).
pub(crate) fn received() -> Option<Interrupt> {
    RECEIVED.get().and_then(|receiver| *receiver.borrow())
}

/// Resolves when SIGINT or SIGTERM arrives, or at once when one arrived since [`install`];
/// never resolves where signals cannot be handled. Without [`install`] (library tests), the
/// handlers are registered by this call and see only later signals.
pub(crate) async fn interrupt_signal() -> Interrupt {
    if let Some(receiver) = RECEIVED.get() {
        let mut receiver = receiver.clone();
        loop {
            if let Some(signal) = *receiver.borrow_and_update() {
                return signal;
            }
            if receiver.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        std::future::pending::<()>().await;
        return Interrupt::Term;
    };
    tokio::select! {
        _ = interrupt.recv() => Interrupt::Int,
        _ = terminate.recv() => Interrupt::Term,
    }
}
