//! SIGINT and SIGTERM as a future: a run selects on it so the reports are still written when the
//! user presses Ctrl-C or the runner cancels the job.

use crate::gate::Interrupt;

/// Resolves when SIGINT or SIGTERM arrives; never resolves where signals cannot be handled.
pub(crate) async fn interrupt_signal() -> Interrupt {
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
