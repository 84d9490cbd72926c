//! Local peers' processes, watched (`transport::shm::ProcessWatch`), so that the engine
//! notices a shared-memory peer's death by itself, whatever launched the job: a ring has no
//! connection to close, and a dead writer looks like a quiet one.
//!
//! Each peer's pidfd sits in the engine's poller; its end wakes any sleep at once. The ring
//! is then read to its end: a goodbye there means the peer finalized and left in order (it
//! writes the goodbye before it exits), none means it died. A death ends an MPI job
//! ([`EngineError::PeerDied`], naming the rank); an MCAPI node goes on without the peer.

use mio::{Interest, Token};

use super::{Engine, EngineError};
use crate::transport::shm::ProcessWatch;
use crate::{debug, warn};

/// Poller tokens of the watches: peer `r`'s is `WATCH_TOKENS + r` (below the tokens of
/// connections being set up, above those of routes).
pub(super) const WATCH_TOKENS: usize = 1 << 39;
/// Passes that may still find frames in an ended peer's ring before it is declared dead
/// anyway (frames the engine cannot take must not keep a dead peer alive).
const SETTLE_PASSES: u32 = 1000;

/// What a peer's ended process means, once its ring has been read as far as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// It said goodbye (finalized), or the engine already gave up on it: nothing to report.
    Left,
    /// Frames still wait in its ring: read them first (they may hold its goodbye).
    NotYet,
    /// It ended without a goodbye.
    Died,
}

/// The verdict on a peer whose process ended (the pure part of [`Engine::settle_ended`]).
pub(super) fn verdict(said_bye: bool, already_gone: bool, input_pending: bool, passes: u32) -> Ended {
    if said_bye || already_gone {
        Ended::Left
    } else if input_pending && passes < SETTLE_PASSES {
        Ended::NotYet
    } else {
        Ended::Died
    }
}

/// The watches of one engine, by world rank, and the peers whose process ended but whose
/// ring is not yet read to its end (with the passes spent on it).
#[derive(Default)]
pub(super) struct Watches {
    by_rank: Vec<Option<ProcessWatch>>,
    ended: Vec<(u32, u32)>,
}

impl Watches {
    /// The peer a poller token is the watch of.
    pub fn peer_of(&self, t: Token) -> Option<u32> {
        let r = t.0.checked_sub(WATCH_TOKENS)?;
        (r < self.by_rank.len()).then_some(r as u32)
    }

    pub fn any_ended(&self) -> bool {
        !self.ended.is_empty()
    }
}

impl Engine {
    /// Watch the process of every peer this engine shares a ring with (their pids are in the
    /// business cards). A peer that cannot be watched (no pidfds in this kernel, a pid from
    /// another namespace) is only said so: its death then ends the job through the launcher.
    pub(super) fn watch_local_peers(&mut self) {
        self.watches.by_rank.resize_with(self.size as usize, || None);
        for i in 0..self.polled.len() {
            let r = self.polled[i];
            let pid = self.cards[r as usize].id.pid;
            match ProcessWatch::open(pid) {
                Ok(w) => {
                    let fd = std::os::fd::AsRawFd::as_raw_fd(&w);
                    match self.poll.registry().register(&mut mio::unix::SourceFd(&fd), Token(WATCH_TOKENS + r as usize), Interest::READABLE) {
                        Ok(()) => self.watches.by_rank[r as usize] = Some(w),
                        Err(e) => warn!("engine", "cannot watch rank {r} (pid {pid}): {e}"),
                    }
                }
                Err(e) => warn!("engine", "cannot watch rank {r} (pid {pid}): {e}; its death is noticed only by the launcher"),
            }
        }
    }

    /// Peer `r`'s process ended (its watch is readable): settle it on this pass.
    pub(super) fn on_peer_ended(&mut self, r: u32) {
        if !self.watches.ended.iter().any(|&(p, _)| p == r) {
            debug!("engine", "the process of rank {r} ended");
            self.watches.ended.push((r, 0));
        }
    }

    /// Read what the ended peers left in their rings, then judge each (see [`verdict`]).
    pub(super) fn settle_ended(&mut self) {
        let mut i = 0;
        while i < self.watches.ended.len() {
            let (r, passes) = self.watches.ended[i];
            // A ring gives one batch per read: read until it runs dry, or for a while.
            for _ in 0..64 {
                if !self.read_route(r) {
                    break;
                }
            }
            let input = self.routes[r as usize].as_ref().is_some_and(|route| route.input_pending());
            match verdict(self.proto.said_bye(r), self.proto.is_lost(r), input, passes) {
                Ended::NotYet => {
                    self.watches.ended[i].1 += 1;
                    i += 1;
                    continue;
                }
                Ended::Left => debug!("engine", "rank {r} ended after its goodbye"),
                Ended::Died => self.peer_died(r),
            }
            self.watches.ended.swap_remove(i);
            if let Some(w) = self.watches.by_rank[r as usize].take() {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&w);
                let _ = self.poll.registry().deregister(&mut mio::unix::SourceFd(&fd));
            }
        }
    }

    /// Peer `r` died: the end of an MPI job (the first death found is the one reported), or,
    /// for an MCAPI node, a peer lost.
    fn peer_died(&mut self, r: u32) {
        let pid = self.watches.by_rank[r as usize].as_ref().map_or(self.cards[r as usize].id.pid, |w| w.pid());
        let e = EngineError::PeerDied { rank: r, pid };
        if self.lost_peer_fatal {
            // The call that waits reports it (once, through its error handler).
            debug!("engine", "{e}");
            self.fatal.get_or_insert(e);
        } else {
            self.lose_peer(r, "its process ended");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_that_said_goodbye_left() {
        assert_eq!(verdict(true, false, false, 0), Ended::Left);
        assert_eq!(verdict(true, false, true, 0), Ended::Left);
        assert_eq!(verdict(false, true, false, 0), Ended::Left, "a peer already given up on is not reported twice");
    }

    #[test]
    fn frames_left_in_the_ring_are_read_before_the_verdict() {
        assert_eq!(verdict(false, false, true, 0), Ended::NotYet);
        assert_eq!(verdict(false, false, true, SETTLE_PASSES - 1), Ended::NotYet);
        assert_eq!(verdict(false, false, true, SETTLE_PASSES), Ended::Died, "frames that never drain keep no dead peer alive");
    }

    #[test]
    fn a_peer_gone_without_goodbye_died() {
        assert_eq!(verdict(false, false, false, 0), Ended::Died);
    }

    #[test]
    fn tokens_name_their_peer() {
        let w = Watches { by_rank: (0..4).map(|_| None).collect(), ended: Vec::new() };
        assert_eq!(w.peer_of(Token(WATCH_TOKENS)), Some(0));
        assert_eq!(w.peer_of(Token(WATCH_TOKENS + 3)), Some(3));
        assert_eq!(w.peer_of(Token(WATCH_TOKENS + 4)), None);
        assert_eq!(w.peer_of(Token(3)), None);
    }
}
