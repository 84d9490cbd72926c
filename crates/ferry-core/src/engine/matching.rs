//! MPI message matching, pure: posted-receive and unexpected-message queues per communicator
//! context. Order is the MPI order: an arriving message takes the oldest posted receive that
//! matches it, a new receive takes the oldest unexpected message that matches it. Because a
//! pair of ranks shares one ordered channel, this gives MPI's non-overtaking guarantee.

use std::collections::VecDeque;

use crate::fastmap::FastMap;

/// What a message says about itself: who sent it, with which tag, on which context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub ctx: u32,
    pub src: u32,
    pub tag: i32,
}

/// What a receive asks for; `None` is the wildcard (MPI_ANY_SOURCE, MPI_ANY_TAG).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub ctx: u32,
    pub src: Option<u32>,
    pub tag: Option<i32>,
}

impl Pattern {
    #[inline]
    pub fn matches(&self, e: &Envelope) -> bool {
        self.ctx == e.ctx && self.src.map_or(true, |s| s == e.src) && self.tag.map_or(true, |t| t == e.tag)
    }
}

struct Context<P, U> {
    posted: VecDeque<(Pattern, P)>,
    unexpected: VecDeque<(Envelope, U)>,
}

impl<P, U> Default for Context<P, U> {
    fn default() -> Self {
        Context { posted: VecDeque::new(), unexpected: VecDeque::new() }
    }
}

/// The two queues of every context. `P` identifies a posted receive, `U` an unexpected message.
pub struct MatchQueues<P, U> {
    /// The contexts (id, queues) in the order they were first used, found by `index`; most
    /// traffic stays on one context for a while, so the one used last is tried before the map.
    contexts: Vec<(u32, Context<P, U>)>,
    index: FastMap<u32, usize>,
    last: usize,
    /// Entries (posted receives and unexpected messages) in all queues: with none, a search
    /// ends before it looks for a context.
    queued: usize,
}

impl<P, U> Default for MatchQueues<P, U> {
    fn default() -> Self {
        MatchQueues { contexts: Vec::new(), index: FastMap::default(), last: 0, queued: 0 }
    }
}

/// Remove entry `i` (found by a search): the oldest one most often, taken from the front.
#[inline]
fn take_at<T>(q: &mut VecDeque<T>, i: usize) -> T {
    if i == 0 { q.pop_front() } else { q.remove(i) }.expect("index from position")
}

impl<P, U> MatchQueues<P, U> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The queues of context `ctx`, made on first use.
    #[inline]
    fn context(&mut self, ctx: u32) -> &mut Context<P, U> {
        if matches!(self.contexts.get(self.last), Some(c) if c.0 == ctx) {
            return &mut self.contexts[self.last].1;
        }
        self.context_elsewhere(ctx)
    }

    /// [`context`](Self::context) when it is not the one used last.
    #[cold]
    fn context_elsewhere(&mut self, ctx: u32) -> &mut Context<P, U> {
        self.last = match self.slot_of(ctx) {
            Some(i) => i,
            None => {
                self.contexts.push((ctx, Context::default()));
                self.index.insert(ctx, self.contexts.len() - 1);
                self.contexts.len() - 1
            }
        };
        &mut self.contexts[self.last].1
    }

    /// The queues of context `ctx`, if it was ever used.
    #[inline]
    fn find(&self, ctx: u32) -> Option<&Context<P, U>> {
        let i = self.slot_of(ctx)?;
        Some(&self.contexts[i].1)
    }

    #[inline]
    fn find_mut(&mut self, ctx: u32) -> Option<&mut Context<P, U>> {
        let i = self.slot_of(ctx)?;
        Some(&mut self.contexts[i].1)
    }

    /// Where context `ctx` is, the one used last tried first.
    #[inline]
    fn slot_of(&self, ctx: u32) -> Option<usize> {
        match self.contexts.get(self.last) {
            Some(c) if c.0 == ctx => Some(self.last),
            _ => self.index.get(&ctx).copied(),
        }
    }

    /// A message arrived: return the oldest matching posted receive (removed), or queue the
    /// message as unexpected and return `None`.
    pub fn arrive(&mut self, env: Envelope, msg: U) -> Option<(P, U)> {
        match self.take_posted(&env) {
            Some(p) => Some((p, msg)),
            None => {
                self.push_unexpected(env, msg);
                None
            }
        }
    }

    /// A message arrived: the oldest matching posted receive, removed; on `None` the caller
    /// queues the message with [`push_unexpected`](Self::push_unexpected) before anything
    /// else arrives on the context.
    #[inline(always)]
    pub fn take_posted(&mut self, env: &Envelope) -> Option<P> {
        if self.queued == 0 {
            return None;
        }
        let c = self.context(env.ctx);
        let i = c.posted.iter().position(|(p, _)| p.matches(env))?;
        let taken = take_at(&mut c.posted, i).1;
        self.queued -= 1;
        Some(taken)
    }

    /// Queue a message no posted receive matched.
    #[inline]
    pub fn push_unexpected(&mut self, env: Envelope, msg: U) {
        self.queued += 1;
        self.context(env.ctx).unexpected.push_back((env, msg));
    }

    /// A receive was posted: return the oldest matching unexpected message (removed), or
    /// queue the receive and return `None`.
    pub fn post(&mut self, pat: Pattern, recv: P) -> Option<(Envelope, U, P)> {
        let c = self.context(pat.ctx);
        match c.unexpected.iter().position(|(e, _)| pat.matches(e)) {
            Some(i) => {
                let (e, u) = take_at(&mut c.unexpected, i);
                self.queued -= 1;
                Some((e, u, recv))
            }
            None => {
                c.posted.push_back((pat, recv));
                self.queued += 1;
                None
            }
        }
    }

    /// Whether a message matching `pat` that arrives now would be the oldest match of `pat`
    /// and no earlier receive's: no receive is posted in its context, and no unexpected
    /// message there matches.
    #[inline]
    pub fn is_clear(&self, pat: &Pattern) -> bool {
        self.queued == 0 || self.find(pat.ctx).map_or(true, |c| c.posted.is_empty() && (c.unexpected.is_empty() || !c.unexpected.iter().any(|(e, _)| pat.matches(e))))
    }

    /// The oldest unexpected message matching `pat`, left in place (MPI_Iprobe).
    pub fn peek(&self, pat: &Pattern) -> Option<(&Envelope, &U)> {
        if self.queued == 0 {
            return None;
        }
        let c = self.find(pat.ctx)?;
        c.unexpected.iter().find(|(e, _)| pat.matches(e)).map(|(e, u)| (e, u))
    }

    /// Remove and return the oldest unexpected message matching `pat` (MPI_Improbe).
    pub fn take(&mut self, pat: &Pattern) -> Option<(Envelope, U)> {
        self.take_if(pat, |_| true)
    }

    /// Remove and return the oldest unexpected message matching `pat` when `ready` says yes
    /// of it; else leave the queues as they are.
    #[inline]
    pub fn take_if(&mut self, pat: &Pattern, ready: impl FnOnce(&U) -> bool) -> Option<(Envelope, U)> {
        if self.queued == 0 {
            return None;
        }
        let c = self.find_mut(pat.ctx)?;
        if c.unexpected.is_empty() {
            return None;
        }
        let i = c.unexpected.iter().position(|(e, _)| pat.matches(e))?;
        if !ready(&c.unexpected[i].1) {
            return None;
        }
        let taken = take_at(&mut c.unexpected, i);
        self.queued -= 1;
        Some(taken)
    }

    /// Remove a posted receive that has not matched yet (MPI_Cancel). True if it was there.
    pub fn cancel(&mut self, ctx: u32, mut is_it: impl FnMut(&P) -> bool) -> Option<P> {
        let c = self.find_mut(ctx)?;
        let i = c.posted.iter().position(|(_, p)| is_it(p))?;
        let taken = c.posted.remove(i).map(|(_, p)| p);
        self.queued -= 1;
        taken
    }

    /// Find an unexpected message in place, e.g. to update it while its payload arrives.
    pub fn unexpected_mut(&mut self, ctx: u32, mut is_it: impl FnMut(&U) -> bool) -> Option<&mut U> {
        self.find_mut(ctx)?.unexpected.iter_mut().find(|(_, u)| is_it(u)).map(|(_, u)| u)
    }

    pub fn posted_len(&self) -> usize {
        self.contexts.iter().map(|c| c.1.posted.len()).sum()
    }

    pub fn unexpected_len(&self) -> usize {
        self.contexts.iter().map(|c| c.1.unexpected.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env(src: u32, tag: i32) -> Envelope {
        Envelope { ctx: 0, src, tag }
    }
    fn pat(src: Option<u32>, tag: Option<i32>) -> Pattern {
        Pattern { ctx: 0, src, tag }
    }

    #[test]
    fn arrival_then_post() {
        let mut q: MatchQueues<u32, &str> = MatchQueues::new();
        assert!(q.arrive(env(1, 5), "a").is_none());
        assert!(q.post(pat(Some(2), None), 10).is_none());
        let (e, u, r) = q.post(pat(Some(1), Some(5)), 11).unwrap();
        assert_eq!((e, u, r), (env(1, 5), "a", 11));
        // The receive for rank 2 is still posted.
        assert_eq!(q.posted_len(), 1);
        assert_eq!(q.arrive(env(2, 0), "b"), Some((10, "b")));
    }

    #[test]
    fn non_overtaking_with_wildcards() {
        let mut q: MatchQueues<u32, u32> = MatchQueues::new();
        for i in 0..5 {
            q.arrive(env(1, 7), i);
        }
        for i in 0..5 {
            let (_, u, _) = q.post(pat(None, None), 0).unwrap();
            assert_eq!(u, i);
        }
    }

    #[test]
    fn tags_select_past_older_messages() {
        let mut q: MatchQueues<u32, u32> = MatchQueues::new();
        q.arrive(env(1, 1), 100);
        q.arrive(env(1, 2), 200);
        q.arrive(env(1, 1), 101);
        assert_eq!(q.post(pat(Some(1), Some(2)), 0).unwrap().1, 200);
        assert_eq!(q.post(pat(Some(1), Some(1)), 0).unwrap().1, 100);
        assert_eq!(q.post(pat(Some(1), None), 0).unwrap().1, 101);
    }

    #[test]
    fn contexts_are_separate() {
        let mut q: MatchQueues<u32, u32> = MatchQueues::new();
        q.arrive(Envelope { ctx: 4, src: 0, tag: 0 }, 1);
        assert!(q.post(pat(None, None), 9).is_none());
        assert!(q.peek(&Pattern { ctx: 4, src: None, tag: None }).is_some());
        assert_eq!(q.take(&Pattern { ctx: 4, src: Some(0), tag: Some(0) }).map(|x| x.1), Some(1));
        assert_eq!(q.unexpected_len(), 0);
    }

    #[test]
    fn cancel_removes_only_unmatched() {
        let mut q: MatchQueues<u32, u32> = MatchQueues::new();
        q.post(pat(Some(3), None), 1);
        q.post(pat(Some(3), None), 2);
        assert_eq!(q.cancel(0, |r| *r == 2), Some(2));
        assert_eq!(q.cancel(0, |r| *r == 2), None);
        assert_eq!(q.arrive(env(3, 0), 9), Some((1, 9)));
    }

    proptest! {
        /// Against a naive model: every message is delivered exactly once, and messages from
        /// one source with one tag are received in the order they were sent.
        #[test]
        fn matches_like_the_model(ops in proptest::collection::vec((any::<bool>(), 0u32..3, 0i32..3, any::<bool>(), any::<bool>()), 1..200)) {
            let mut q: MatchQueues<usize, (u32, i32, usize)> = MatchQueues::new();
            let mut sent = 0usize;
            let mut delivered: Vec<(u32, i32, usize)> = Vec::new();
            for (is_send, src, tag, any_src, any_tag) in ops {
                if is_send {
                    let m = (src, tag, sent);
                    sent += 1;
                    if let Some((_, m)) = q.arrive(env(src, tag), m) { delivered.push(m); }
                } else {
                    let p = pat(if any_src { None } else { Some(src) }, if any_tag { None } else { Some(tag) });
                    if let Some((e, m, _)) = q.post(p, 0) {
                        prop_assert!(p.matches(&e));
                        delivered.push(m);
                    }
                }
                prop_assert_eq!(q.queued, q.posted_len() + q.unexpected_len(), "the count of queued entries");
                prop_assert_eq!(q.is_clear(&pat(Some(src), None)), q.posted_len() == 0 && q.peek(&pat(Some(src), None)).is_none());
            }
            // Drain with wildcard receives.
            while let Some((_, m, _)) = q.post(pat(None, None), 0) { delivered.push(m); }
            prop_assert_eq!(delivered.len(), sent);
            for s in 0..3 { for t in 0..3 {
                let seq: Vec<usize> = delivered.iter().filter(|m| m.0 == s && m.1 == t).map(|m| m.2).collect();
                prop_assert!(seq.windows(2).all(|w| w[0] < w[1]), "order broken for ({}, {}): {:?}", s, t, seq);
            }}
        }
    }
}
