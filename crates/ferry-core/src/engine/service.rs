//! A service: code of a layer above that consumes messages of its own contexts inside every
//! progress pass, whatever the process waits for (MPI's one-sided communication: the target
//! of a put applies it while it waits for anything at all, or while the progress thread
//! runs). The engine knows nothing of what a service does; it only lends itself to it.

use super::Engine;

/// What the engine runs on every progress pass.
pub trait Service: Send {
    /// Look for work and do what can be done now, without blocking. Returns whether anything
    /// moved (a wait then looks at its condition again).
    fn poll(&mut self, engine: &mut Engine) -> bool;
}

impl Engine {
    /// Install the service (one per engine; a second replaces the first).
    pub fn set_service(&mut self, s: Box<dyn Service>) {
        self.service = Some(s);
    }

    /// One pass of the service. It is taken out of its slot while it runs: it drives this
    /// very engine, and must not run inside itself.
    pub(super) fn run_service(&mut self) -> bool {
        let Some(mut s) = self.service.take() else { return false };
        let moved = s.poll(self);
        // Unless the service installed another meanwhile.
        if self.service.is_none() {
            self.service = Some(s);
        }
        moved
    }
}
