//! A route to a peer of another job (a bridge, `tcp/bridge.rs`): on the wire both ends name
//! themselves by their rank in their own job, while the engine above numbers the peer after
//! its own job's ranks. The route rewrites the peer's number in each header: outbound the
//! destination becomes the peer's wire rank, inbound the source (which must be that wire
//! rank) becomes the peer's local number. Everything else passes through.

use ferry_wire::{Header, Limits, HEADER_LEN};

use crate::transport::{Deliver, OutFrame, RecvOutcome, Route, RouteError, SendOutcome, Sink};

/// Headers on a bridge name ranks of the other job: checked by the rewrite instead.
const ANY_RANK: Limits = Limits { world_size: u32::MAX, max_payload: ferry_wire::MAX_PAYLOAD };

pub struct Renumbered {
    inner: Box<dyn Route>,
    /// The peer's number in this process.
    local: u32,
    /// The peer's rank in its own job.
    wire: u32,
}

impl Renumbered {
    pub fn new(inner: Box<dyn Route>, local: u32, wire: u32) -> Renumbered {
        Renumbered { inner, local, wire }
    }

    fn outbound(&self, header: &[u8; HEADER_LEN]) -> [u8; HEADER_LEN] {
        let mut h = Header::decode(header, &ANY_RANK).expect("the engine encodes valid headers");
        h.dst = self.wire;
        h.encode()
    }
}

/// Hands inbound frames on with the peer's local number as their source.
struct Inbound<'a> {
    to: &'a mut dyn Deliver,
    local: u32,
    wire: u32,
}

impl Inbound<'_> {
    fn rewrite(&self, h: &Header) -> Result<Header, String> {
        if h.src != self.wire {
            return Err(format!("frame from rank {} on the bridge route of rank {}", h.src, self.wire));
        }
        let mut h = *h;
        h.src = self.local;
        Ok(h)
    }
}

impl Deliver for Inbound<'_> {
    fn header(&mut self, _peer: u32, h: &Header, whole: bool) -> Result<Sink, String> {
        let h = self.rewrite(h)?;
        self.to.header(self.local, &h, whole)
    }
    fn frame(&mut self, _peer: u32, h: Header, sink: Sink) -> Result<(), String> {
        let h = self.rewrite(&h)?;
        self.to.frame(self.local, h, sink)
    }
    fn whole(&mut self, _peer: u32, h: Header, payload: &[u8]) -> Result<(), String> {
        let h = self.rewrite(&h)?;
        self.to.whole(self.local, h, payload)
    }
}

impl Route for Renumbered {
    fn try_send(&mut self, header: &[u8; HEADER_LEN], payload: &[u8]) -> Result<SendOutcome, RouteError> {
        let h = self.outbound(header);
        self.inner.try_send(&h, payload)
    }
    fn try_send_eager(&mut self, from: u32, _to: u32, context: u32, tag: i32, seq: u64, payload: &[u8]) -> Result<SendOutcome, RouteError> {
        self.inner.try_send_eager(from, self.wire, context, tag, seq, payload)
    }
    fn send(&mut self, mut f: OutFrame, done: &mut Vec<u64>) -> Result<SendOutcome, RouteError> {
        f.header = self.outbound(&f.header);
        self.inner.send(f, done)
    }
    fn enqueue(&mut self, mut f: OutFrame) {
        f.header = self.outbound(&f.header);
        self.inner.enqueue(f)
    }
    fn flush(&mut self, done: &mut Vec<u64>) -> Result<bool, RouteError> {
        self.inner.flush(done)
    }
    fn queued(&self) -> usize {
        self.inner.queued()
    }
    fn recv(&mut self, _peer: u32, to: &mut dyn Deliver, _limits: &Limits) -> Result<RecvOutcome, RouteError> {
        let mut inbound = Inbound { to, local: self.local, wire: self.wire };
        self.inner.recv(self.wire, &mut inbound, &ANY_RANK)
    }
    fn input_pending(&self) -> bool {
        self.inner.input_pending()
    }
    fn output_ready(&self) -> bool {
        self.inner.output_ready()
    }
    fn source(&mut self) -> Option<&mut dyn mio::event::Source> {
        self.inner.source()
    }
    fn mark_readable(&mut self) {
        self.inner.mark_readable()
    }
    fn mark_read_closed(&mut self) {
        self.inner.mark_read_closed()
    }
    fn closes_visibly(&self) -> bool {
        self.inner.closes_visibly()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::mem::mem_pair;
    use ferry_wire::Kind;

    /// Collects (peer, header, payload) of whole frames.
    #[derive(Default)]
    struct Got(Vec<(u32, Header, Vec<u8>)>);

    impl Deliver for Got {
        fn header(&mut self, _peer: u32, h: &Header, _whole: bool) -> Result<Sink, String> {
            Ok(Sink::Vec(Vec::with_capacity(h.len as usize)))
        }
        fn frame(&mut self, peer: u32, h: Header, sink: Sink) -> Result<(), String> {
            self.0.push((peer, h, sink.into_vec()));
            Ok(())
        }
    }

    fn eager(src: u32, dst: u32, payload: &[u8]) -> OutFrame {
        let mut h = Header::new(Kind::Eager);
        (h.src, h.dst, h.seq, h.len) = (src, dst, 1, payload.len() as u64);
        OutFrame::copied(&h.encode(), payload)
    }

    #[test]
    fn both_ends_see_their_own_numbers() {
        // Process A: rank 1 of its job, sees B as its peer 5. Process B: rank 0 of its job,
        // sees A as its peer 3.
        let (a_end, b_end) = mem_pair(1 << 16);
        let mut a = Renumbered::new(Box::new(a_end), 5, 0);
        let mut b = Renumbered::new(Box::new(b_end), 3, 1);
        let mut done = Vec::new();
        a.send(eager(1, 5, b"ping"), &mut done).unwrap();
        let mut got = Got::default();
        b.recv(3, &mut got, &Limits::new(2)).unwrap();
        let (peer, h, p) = &got.0[0];
        assert_eq!((*peer, h.src, h.dst, p.as_slice()), (3, 3, 0, &b"ping"[..]));
        // The shorter eager path of a route too.
        b.try_send_eager(0, 3, 7, 9, 1, b"pong").unwrap();
        let mut got = Got::default();
        a.recv(5, &mut got, &Limits::new(2)).unwrap();
        let (peer, h, p) = &got.0[0];
        assert_eq!((*peer, h.src, h.dst, h.context, h.tag, p.as_slice()), (5, 5, 1, 7, 9, &b"pong"[..]));
    }

    #[test]
    fn a_frame_naming_another_sender_fails_the_route() {
        let (a_end, b_end) = mem_pair(1 << 16);
        let mut raw: Box<dyn Route> = Box::new(a_end);
        let mut b = Renumbered::new(Box::new(b_end), 3, 1);
        let mut done = Vec::new();
        // Wire rank 2 on the route of wire rank 1.
        raw.send(eager(2, 0, b"x"), &mut done).unwrap();
        let mut got = Got::default();
        assert!(b.recv(3, &mut got, &Limits::new(2)).is_err());
        assert!(got.0.is_empty());
    }
}
