//! The node core between several nodes joined by in-memory links, delivered in an order a
//! seed picks (per link FIFO, as the engine keeps it).

use std::collections::{HashMap, VecDeque};

use proptest::prelude::*;

use super::*;

struct Net {
    nodes: Vec<Node>,
    links: HashMap<(Rank, Rank), VecDeque<Vec<u8>>>,
    seed: u64,
}

impl Net {
    /// `n` nodes; node `i` runs at rank `i` with node id `10 + i`.
    fn new(n: u32, seed: u64, tweak: impl Fn(&mut Config)) -> Net {
        let nodes = (0..n)
            .map(|r| {
                let mut c = Config::new(r, 0, 10 + r);
                tweak(&mut c);
                Node::new(c)
            })
            .collect();
        Net { nodes, links: HashMap::new(), seed: seed | 1 }
    }

    fn rand(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    /// Move frames until nothing moves; `budget` bounds the deliveries.
    fn settle(&mut self) {
        for _ in 0..1_000_000 {
            for r in 0..self.nodes.len() {
                for node in self.nodes[r].wanted_nodes() {
                    let w = if (10..10 + self.nodes.len() as u32).contains(&node) { Whereabouts::At(node - 10) } else { Whereabouts::Never };
                    self.nodes[r].located(node, w);
                }
                while let Some((to, bytes)) = self.nodes[r].next_out() {
                    self.links.entry((r as Rank, to)).or_default().push_back(bytes.as_slice().to_vec());
                }
            }
            let busy: Vec<(Rank, Rank)> = self.links.iter().filter(|(_, q)| !q.is_empty()).map(|(k, _)| *k).collect();
            if busy.is_empty() {
                let owed = self.nodes.iter().any(|n| n.peers.values().any(|p| p.taken > p.acked && !p.lost));
                if !owed {
                    return;
                }
                for n in &mut self.nodes {
                    n.flush_owed();
                }
                continue;
            }
            let mut busy = busy;
            busy.sort_unstable();
            let k = busy[(self.rand() % busy.len() as u64) as usize];
            let bytes = self.links.get_mut(&k).and_then(|q| q.pop_front()).expect("busy");
            if !self.nodes[k.1 as usize].is_lost(k.0) {
                self.nodes[k.1 as usize].deliver(k.0, bytes).expect("well-formed frame");
            }
        }
        panic!("the network never settled");
    }

    fn get(&mut self, at: usize, node: u32, port: u32) -> Ep {
        let rid = self.nodes[at].get_endpoint(0, node, port, [0; 3]).expect("get");
        self.settle();
        match self.nodes[at].take(rid).expect("found") {
            Done { status: Status::Success, out: Outcome::Handle(ep), .. } => ep,
            d => panic!("get failed: {d:?}"),
        }
    }

    fn wait(&mut self, at: usize, rid: ReqId) -> Done {
        self.settle();
        self.nodes[at].take(rid).expect("request finished")
    }
}

fn payload(d: &Done) -> &[u8] {
    match &d.out {
        Outcome::Data { frame, offset } => &frame[*offset..*offset + d.size],
        o => panic!("no data: {o:?}"),
    }
}

fn recv_now(net: &mut Net, at: usize, ep: Ep) -> Option<Vec<u8>> {
    net.nodes[at].msg_try_recv(ep).expect("recv").map(|f| f[crate::wire::HEADER_LEN..].to_vec())
}

#[test]
fn acknowledged_frames_carry_the_next_messages_whole() {
    let mut net = Net::new(2, 3, |c| c.ack_every = 1);
    let a = net.nodes[0].create_endpoint(Some(1)).expect("create");
    let b = net.nodes[1].create_endpoint(Some(2)).expect("create");
    let to_b = net.get(0, 11, 2);
    for (i, data) in [&[7u8; 300][..], b"abc", b"", &[1, 2, 3, 4, 5, 6, 7, 8]].into_iter().enumerate() {
        assert_eq!(net.nodes[0].msg_send(a, to_b, data, 1, [0; 3]), Ok(None));
        net.settle();
        assert_eq!(recv_now(&mut net, 1, b).as_deref(), Some(data), "message {i}");
        net.settle();
        assert_eq!(net.nodes[0].unsettled(), 0);
        assert_eq!(net.nodes[0].spare_frames.len(), 1, "the acknowledged frame is kept for the next message");
    }
}

#[test]
fn a_message_reaches_an_endpoint_found_by_get() {
    let mut net = Net::new(2, 1, |_| {});
    let a = net.nodes[0].create_endpoint(Some(1)).expect("create");
    let b = net.nodes[1].create_endpoint(Some(2)).expect("create");
    let to_b = net.get(0, 11, 2);
    assert_eq!(net.nodes[0].msg_send(a, to_b, b"hello", 1, [0; 3]), Ok(None));
    net.settle();
    assert_eq!(net.nodes[1].msg_available(b), Ok(1));
    let rid = net.nodes[1].msg_recv(b, 64, [0; 3]).expect("recv");
    let d = net.wait(1, rid);
    assert_eq!((d.status, payload(&d)), (Status::Success, &b"hello"[..]));
    assert_eq!(net.nodes[0].unsettled(), 0, "the sender's copy went when the receiver took it");
}

#[test]
fn get_waits_for_an_endpoint_created_later_and_fails_for_unknown_nodes() {
    let mut net = Net::new(2, 2, |_| {});
    let rid = net.nodes[0].get_endpoint(0, 11, 5, [0; 3]).expect("get");
    net.settle();
    assert!(!net.nodes[0].is_done(rid));
    net.nodes[1].create_endpoint(Some(5)).expect("create");
    let d = net.wait(0, rid);
    assert!(matches!(d.out, Outcome::Handle(_)), "{d:?}");
    let rid = net.nodes[0].get_endpoint(0, 99, 5, [0; 3]).expect("get");
    assert_eq!(net.wait(0, rid).status, Status::ErrNodeInvalid);
    assert_eq!(net.nodes[0].get_endpoint(1, 11, 5, [0; 3]), Err(Status::ErrDomainInvalid));
    let own = net.nodes[0].get_endpoint(0, 10, 7, [0; 3]).expect("get");
    assert!(!net.nodes[0].is_done(own));
    net.nodes[0].create_endpoint(Some(7)).expect("create");
    assert!(net.nodes[0].is_done(own));
}

#[test]
fn receive_takes_the_most_urgent_first_and_fifo_within_a_priority() {
    let mut net = Net::new(2, 3, |_| {});
    let a = net.nodes[0].create_endpoint(Some(1)).expect("create");
    let b = net.nodes[1].create_endpoint(Some(2)).expect("create");
    let to_b = net.get(0, 11, 2);
    for (p, m) in [(5, "a"), (0, "b"), (3, "c"), (0, "d"), (5, "e")] {
        net.nodes[0].msg_send(a, to_b, m.as_bytes(), p, [0; 3]).expect("send");
    }
    net.settle();
    let got: Vec<Vec<u8>> = (0..5).map(|_| recv_now(&mut net, 1, b).expect("queued")).collect();
    assert_eq!(got, [b"b", b"d", b"c", b"a", b"e"].map(|s| s.to_vec()));
}

#[test]
fn errors_of_message_calls() {
    let mut net = Net::new(2, 4, |c| c.max_payload = 100);
    let a = net.nodes[0].create_endpoint(Some(1)).expect("create");
    assert_eq!(net.nodes[0].create_endpoint(Some(1)), Err(Status::ErrEndpExists));
    let to_b = {
        net.nodes[1].create_endpoint(Some(2)).expect("create");
        net.get(0, 11, 2)
    };
    assert_eq!(net.nodes[0].msg_send(a, to_b, &[0; 101], 0, [0; 3]), Err(Status::ErrMsgSize));
    assert_eq!(net.nodes[0].msg_send(a, to_b, &[], 11, [0; 3]), Err(Status::ErrPriority));
    assert_eq!(net.nodes[0].msg_send(to_b, a, &[], 0, [0; 3]), Err(Status::ErrEndpInvalid));
    assert_eq!(net.nodes[0].msg_send(a, Ep(12345), &[], 0, [0; 3]), Err(Status::ErrEndpInvalid));
    assert_eq!(net.nodes[0].msg_recv(to_b, 10, [0; 3]), Err(Status::ErrEndpInvalid));
    assert_eq!(net.nodes[0].delete_endpoint(to_b), Err(Status::ErrEndpNotOwner));
    // Truncation: the status and the message's size; the message stays.
    net.nodes[0].msg_send(a, a, b"0123456789", 0, [0; 3]).expect("send to self");
    net.settle();
    let rid = net.nodes[0].msg_recv(a, 4, [0; 3]).expect("recv");
    let d = net.wait(0, rid);
    assert_eq!((d.status, d.size), (Status::ErrMsgTruncated, 10));
    assert_eq!(net.nodes[0].msg_available(a), Ok(1));
    assert_eq!(net.nodes[0].delete_endpoint(a), Ok(()));
    assert_eq!(net.nodes[0].delete_endpoint(a), Err(Status::ErrEndpInvalid));
}

#[test]
fn a_posted_receive_takes_the_next_message_and_can_be_cancelled() {
    let mut net = Net::new(2, 5, |_| {});
    let a = net.nodes[0].create_endpoint(Some(1)).expect("create");
    let b = net.nodes[1].create_endpoint(Some(2)).expect("create");
    let to_b = net.get(0, 11, 2);
    let r1 = net.nodes[1].msg_recv(b, 8, [0; 3]).expect("recv");
    let r2 = net.nodes[1].msg_recv(b, 8, [0; 3]).expect("recv");
    assert_eq!(net.nodes[1].cancel(r2), Ok(()));
    assert!(!net.nodes[1].request_valid(r2));
    net.nodes[0].msg_send(a, to_b, b"x", 0, [0; 3]).expect("send");
    let d = net.wait(1, r1);
    assert_eq!(payload(&d), b"x");
    assert_eq!(net.nodes[1].msg_available(b), Ok(0));
}

/// Senders to a receiver that keeps only `limit` messages: every message arrives exactly
/// once, in order per sender and priority, and the senders' copies all go.
fn flood(seed: u64, senders: u32, per_sender: u32, limit: u32, take_every: u32) {
    let mut net = Net::new(senders + 1, seed, |_| {});
    let b = net.nodes[0].create_endpoint(Some(2)).expect("create");
    let a = net.nodes[0].endpoint_attrs(b).expect("local");
    net.nodes[0].set_attrs(b, EpAttrs { recv_buffers: limit, ..a }).expect("attrs");
    let mut eps = Vec::new();
    for s in 1..=senders as usize {
        let a = net.nodes[s].create_endpoint(Some(1)).expect("create");
        let to = net.get(s, 10, 2);
        eps.push((a, to));
    }
    let mut pending: Vec<Vec<ReqId>> = vec![Vec::new(); senders as usize + 1];
    let mut got: Vec<(u32, u32, u32)> = Vec::new();
    let mut sent = 0;
    let total = senders * per_sender;
    while got.len() < total as usize {
        if sent < total {
            let s = 1 + (sent % senders) as usize;
            let i = sent / senders;
            let prio = (i % 3) as u32;
            let (a, to) = eps[s - 1];
            let msg = [s as u32, i, prio].map(|v| v.to_le_bytes()).concat();
            if let Some(rid) = net.nodes[s].msg_send(a, to, &msg, prio, [0; 3]).expect("send") {
                pending[s].push(rid);
            }
            sent += 1;
        }
        // Move a few frames, then maybe take one.
        for _ in 0..(net.rand() % 4) {
            let busy: Vec<(Rank, Rank)> = net.links.iter().filter(|(_, q)| !q.is_empty()).map(|(k, _)| *k).collect();
            for r in 0..net.nodes.len() {
                while let Some((to, bytes)) = net.nodes[r].next_out() {
                    net.links.entry((r as Rank, to)).or_default().push_back(bytes.as_slice().to_vec());
                }
            }
            if let Some(&k) = busy.first() {
                let bytes = net.links.get_mut(&k).and_then(|q| q.pop_front()).expect("busy");
                net.nodes[k.1 as usize].deliver(k.0, bytes).expect("frame");
            }
        }
        let l = net.nodes[0].local(b).expect("local");
        assert_eq!(l.blocked, l.refusing.values().filter(|r| r.blocked).count(), "blocked senders counted");
        if sent >= total || net.rand() % take_every as u64 == 0 {
            if sent >= total {
                net.settle();
            }
            while let Some(m) = recv_now(&mut net, 0, b) {
                let v: Vec<u32> = m.chunks(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
                got.push((v[0], v[1], v[2]));
                if net.rand() % 2 == 0 {
                    break;
                }
            }
        }
    }
    net.settle();
    let mut sorted = got.clone();
    sorted.sort_unstable();
    for w in sorted.windows(2) {
        assert_ne!(w[0], w[1], "received twice");
    }
    for s in 1..=senders {
        for prio in 0..3 {
            let seq: Vec<u32> = got.iter().filter(|g| g.0 == s && g.2 == prio).map(|g| g.1).collect();
            let want: Vec<u32> = (0..per_sender).filter(|i| i % 3 == prio).collect();
            assert_eq!(seq, want, "sender {s} priority {prio}");
        }
    }
    for s in 1..=senders as usize {
        assert_eq!(net.nodes[s].unsettled(), 0, "sender {s} still keeps messages");
        for rid in &pending[s] {
            assert_eq!(net.nodes[s].take(*rid).map(|d| d.status), Some(Status::Success));
        }
    }
    assert_eq!(net.nodes[0].msg_available(b), Ok(0));
}

#[test]
fn a_full_receiver_loses_nothing() {
    flood(7, 3, 400, 4, 5);
    flood(8, 1, 1000, 1, 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn floods_keep_order_and_lose_nothing(seed in 1u64.., senders in 1u32..4, limit in 1u32..8, take_every in 1u32..6) {
        flood(seed, senders, 60, limit, take_every);
    }

    #[test]
    fn frames_from_anyone_never_panic(frames in proptest::collection::vec((0u32..3, proptest::collection::vec(any::<u8>(), 0..64)), 0..40)) {
        let mut net = Net::new(3, 9, |_| {});
        net.nodes[0].create_endpoint(Some(1)).expect("create");
        for (from, mut bytes) in frames {
            if bytes.len() >= 4 {
                bytes[0] = crate::wire::VERSION;
                bytes[1] = bytes[1] % 16;
            }
            let _ = net.nodes[0].deliver(from, bytes);
            while net.nodes[0].next_out().is_some() {}
        }
    }
}

/// The bytes of a packet lent to the user.
fn lent_bytes(addr: usize, len: usize) -> Vec<u8> {
    // SAFETY: a lent packet's bytes stay in place until released (frames and slot areas
    // live as long as a packet is lent).
    unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec()
}

fn connected(net: &mut Net, via: usize, scalar: bool) -> (Ep, Ep) {
    let (hs, hr, _, _) = connected_via(net, via, scalar);
    (hs, hr)
}

/// The channel's handles, and the handles `via` got of its endpoints.
fn connected_via(net: &mut Net, via: usize, scalar: bool) -> (Ep, Ep, Ep, Ep) {
    let s = net.nodes[0].create_endpoint(Some(1)).expect("create");
    let r = net.nodes[1].create_endpoint(Some(2)).expect("create");
    let to_s = net.get(via, 10, 1);
    let to_r = net.get(via, 11, 2);
    let c = net.nodes[via].connect(to_s, to_r, scalar, [0; 3]).expect("connect");
    assert_eq!(net.wait(via, c).status, Status::Success);
    let ro = net.nodes[1].open(r, scalar, false, [0; 3]).expect("open");
    let so = net.nodes[0].open(s, scalar, true, [0; 3]).expect("open");
    let hr = match net.wait(1, ro).out {
        Outcome::Handle(h) => h,
        o => panic!("{o:?}"),
    };
    let hs = match net.wait(0, so).out {
        Outcome::Handle(h) => h,
        o => panic!("{o:?}"),
    };
    (hs, hr, to_s, to_r)
}

#[test]
fn packets_keep_order_through_a_small_window_and_are_lent_until_released() {
    let mut net = Net::new(3, 11, |c| c.queue_limit = 4);
    let (hs, hr) = connected(&mut net, 2, false);
    let mut held = Vec::new();
    for i in 0..50u32 {
        if let Some(rid) = net.nodes[0].pkt_send(hs, &i.to_le_bytes(), [0; 3]).expect("send") {
            held.push(rid);
        }
    }
    assert!(held.len() >= 46, "the window holds back all but 4");
    let mut next = 0u32;
    while next < 50 {
        net.settle();
        let mut lent = Vec::new();
        while let Some((addr, len)) = net.nodes[1].pkt_try_recv(hr).expect("recv") {
            assert!(net.nodes[1].pkt_is_lent(addr));
            let bytes = lent_bytes(addr, len);
            assert_eq!((len, bytes), (4, next.to_le_bytes().to_vec()));
            next += 1;
            lent.push(addr);
        }
        for addr in lent {
            net.nodes[1].pkt_release(addr).expect("release");
            assert!(!net.nodes[1].pkt_is_lent(addr));
        }
        net.nodes[1].flush_owed();
    }
    assert_eq!(net.nodes[1].pkt_release(12345), Err(Status::ErrBufInvalid));
    for rid in held {
        assert_eq!(net.nodes[0].take(rid).map(|d| d.status), Some(Status::Success));
    }
}

#[test]
fn channel_misuse_gets_its_status() {
    let mut net = Net::new(2, 12, |_| {});
    let (hs, hr) = connected(&mut net, 0, false);
    assert_eq!(net.nodes[0].pkt_try_recv(hs), Err(Status::ErrChanInvalid));
    assert_eq!(net.nodes[1].pkt_send(hr, b"x", [0; 3]), Err(Status::ErrChanInvalid));
    assert_eq!(net.nodes[0].scl_send(hs, 1, 8, [0; 3]), Err(Status::ErrChanInvalid));
    assert_eq!(net.nodes[0].open(hs, false, true, [0; 3]), Err(Status::ErrChanOpen));
    assert_eq!(net.nodes[1].open(hr, true, false, [0; 3]), Err(Status::ErrChanType));
    let other = net.nodes[0].create_endpoint(Some(9)).expect("create");
    let to_r = net.get(0, 11, 2);
    let c = net.nodes[0].connect(other, to_r, false, [0; 3]).expect("connect");
    assert_eq!(net.wait(0, c).status, Status::ErrChanConnected);
    // The half that accepted was undone: `other` connects elsewhere later.
    let third = net.nodes[1].create_endpoint(Some(3)).expect("create");
    let to_third = net.get(0, 11, 3);
    let c = net.nodes[0].connect(other, to_third, false, [0; 3]).expect("connect");
    assert_eq!(net.wait(0, c).status, Status::Success);
    let _ = third;
    assert_eq!(net.nodes[0].pkt_send(Ep(999), b"x", [0; 3]), Err(Status::ErrChanInvalid));
}

#[test]
fn close_and_connect_again() {
    let mut net = Net::new(2, 13, |_| {});
    let (hs, hr, _, to_r) = connected_via(&mut net, 0, false);
    net.nodes[0].pkt_send(hs, b"last", [0; 3]).expect("send");
    let cs = net.nodes[0].close(hs, false, true, [0; 3]).expect("close");
    assert_eq!(net.nodes[0].pkt_send(hs, b"x", [0; 3]), Err(Status::ErrChanInvalid), "the handle goes with its close");
    net.settle();
    assert!(!net.nodes[0].is_done(cs), "a close finishes when both sides closed");
    let (addr, len) = net.nodes[1].pkt_try_recv(hr).expect("recv").expect("a packet");
    assert_eq!(len, 4);
    assert_eq!(net.nodes[1].pkt_try_recv(hr), Err(Status::ErrChanNotOpen), "the sender closed");
    assert_eq!(net.nodes[1].close(hr, true, false, [0; 3]), Err(Status::ErrChanType));
    assert_eq!(net.nodes[1].close(hr, false, true, [0; 3]), Err(Status::ErrChanDirection));
    let cr = net.nodes[1].close(hr, false, false, [0; 3]).expect("close");
    assert_eq!(net.wait(1, cr).status, Status::Success);
    assert_eq!(net.wait(0, cs).status, Status::Success);
    assert_eq!(net.nodes[1].pkt_release_test(addr), Ok(false));
    net.nodes[1].pkt_release(addr).expect("a lent packet outlives its channel");
    assert_eq!(net.nodes[1].pkt_release_test(addr), Ok(true));
    let c = net.nodes[0].connect(hs, to_r, true, [0; 3]).expect("connect");
    assert_eq!(net.wait(0, c).status, Status::Success);
    // A second get of an endpoint makes it unfit for a channel.
    let again = net.get(0, 11, 2);
    assert_eq!(again, to_r);
    let other = net.nodes[0].create_endpoint(Some(5)).expect("create");
    let c = net.nodes[0].connect(other, again, false, [0; 3]).expect("connect");
    assert_eq!(net.wait(0, c).status, Status::ErrChanConnected);
}

#[test]
fn a_truncated_receive_leaves_the_message_and_cancel_releases() {
    let mut net = Net::new(1, 16, |_| {});
    let a = net.nodes[0].create_endpoint(Some(1)).expect("create");
    let r = net.nodes[0].msg_recv(a, 2, [0; 3]).expect("recv");
    net.nodes[0].msg_send(a, a, b"long", 0, [0; 3]).expect("send");
    let d = net.wait(0, r);
    assert_eq!((d.status, d.size), (Status::ErrMsgTruncated, 4));
    assert_eq!(net.nodes[0].msg_available(a), Ok(1), "the message stays");
    let r = net.nodes[0].msg_recv(a, 8, [0; 3]).expect("recv");
    assert_eq!(payload(&net.wait(0, r)), b"long");
    let r = net.nodes[0].msg_recv(a, 8, [0; 3]).expect("recv");
    assert_eq!(net.nodes[0].cancel(r), Ok(()));
    assert!(!net.nodes[0].request_valid(r) && net.nodes[0].was_cancelled(r));
    assert_eq!(net.nodes[0].cancel(r), Err(Status::ErrRequestInvalid));
}

#[test]
fn scalars_carry_their_width() {
    let mut net = Net::new(2, 14, |c| c.scalar_window = 3);
    let (hs, hr) = connected(&mut net, 1, true);
    let vals: [(u64, u8); 5] = [(0xff, 1), (0xffff, 2), (0xdead_beef, 4), (u64::MAX, 8), (7, 8)];
    for (v, w) in vals {
        net.nodes[0].scl_send(hs, v, w, [0; 3]).expect("send");
    }
    net.settle();
    assert_eq!(net.nodes[1].chan_available(hr, true), Ok(3));
    assert_eq!(net.nodes[1].scl_try_recv(hr, 8), Err(Status::ErrSclSize));
    for (v, w) in vals {
        let got = loop {
            net.settle();
            if let Some(x) = net.nodes[1].scl_try_recv(hr, w).expect("recv") {
                break x;
            }
            net.nodes[1].flush_owed();
        };
        assert_eq!(got, v);
    }
}

#[test]
fn a_lost_peer_fails_what_needs_it() {
    let mut net = Net::new(3, 15, |_| {});
    let (hs, hr) = connected(&mut net, 2, false);
    let posted = net.nodes[1].pkt_recv(hr, [0; 3]).expect("recv");
    let m = net.nodes[1].create_endpoint(Some(8)).expect("create");
    let get = net.nodes[1].get_endpoint(0, 12, 77, [0; 3]).expect("get");
    net.settle();
    net.nodes[1].peer_lost(0);
    net.nodes[1].peer_lost(2);
    assert_eq!(net.nodes[1].take(posted).map(|d| d.status), Some(Status::ErrTransmission));
    assert_eq!(net.nodes[1].take(get).map(|d| d.status), Some(Status::ErrTransmission));
    assert_eq!(net.nodes[1].pkt_try_recv(hr), Err(Status::ErrTransmission));
    let to_s = net.get(1, 11, 8);
    assert_eq!(to_s, m, "local endpoints still work");
    let _ = hs;
}


// ----- shared receive slots -------------------------------------------------------------------

/// Slot areas in plain memory, shared by every node of a test network that has one.
#[derive(Clone, Default)]
struct FakeSlots {
    areas: Arc<std::sync::Mutex<HashMap<(Rank, u64), Arc<FakeArea>>>>,
    me: Rank,
    /// Ranks that cannot share memory with the others.
    apart: Vec<Rank>,
}

struct FakeArea {
    bytes: usize,
    mem: std::sync::Mutex<Vec<u8>>,
    base: usize,
}

impl SlotArea for FakeArea {
    fn addr(&self, i: usize) -> usize {
        self.base + i * self.bytes
    }
    fn write(&self, i: usize, data: &[u8]) {
        self.mem.lock().expect("test lock")[i * self.bytes..i * self.bytes + data.len()].copy_from_slice(data);
    }
}

impl SlotMemory for FakeSlots {
    fn create(&mut self, writer: Rank, key: u64, slots: usize, slot_bytes: usize) -> Option<Arc<dyn SlotArea>> {
        if self.apart.contains(&writer) || self.apart.contains(&self.me) {
            return None;
        }
        let mem = vec![0u8; slots * slot_bytes];
        let base = mem.as_ptr() as usize;
        let a = Arc::new(FakeArea { bytes: slot_bytes, mem: std::sync::Mutex::new(mem), base });
        self.areas.lock().expect("test lock").insert((self.me, key), a.clone());
        Some(a)
    }
    fn open(&mut self, owner: Rank, key: u64, _slots: usize, _slot_bytes: usize) -> Option<Arc<dyn SlotArea>> {
        let a: Arc<dyn SlotArea> = self.areas.lock().expect("test lock").get(&(owner, key))?.clone();
        Some(a)
    }
}

impl Net {
    /// Give every node shared slots, except those of `apart`; the slot areas made so far.
    fn share_slots(&mut self, apart: &[Rank]) -> FakeSlots {
        let shared = FakeSlots { apart: apart.to_vec(), ..FakeSlots::default() };
        for (r, n) in self.nodes.iter_mut().enumerate() {
            n.set_slot_memory(Box::new(FakeSlots { me: r as Rank, ..shared.clone() }));
        }
        shared
    }
}

#[test]
fn packets_go_through_shared_slots_in_order_and_the_slot_itself_is_lent() {
    let mut net = Net::new(3, 21, |c| {
        c.queue_limit = 4;
        c.max_payload = 256;
    });
    let shared = net.share_slots(&[]);
    let (hs, hr) = connected(&mut net, 2, false);
    let area = shared.areas.lock().expect("test lock").get(&(1, 1)).cloned().expect("the receiver made its slots");
    let inside = |addr: usize| (area.base..area.base + 4 * 256).contains(&addr);
    let mut held = Vec::new();
    for i in 0..40u32 {
        let data = vec![i as u8; (i as usize * 7) % 257];
        if let Some(rid) = net.nodes[0].pkt_send(hs, &data, [0; 3]).expect("send") {
            held.push(rid);
        }
    }
    assert_eq!(held.len(), 36, "the window of 4 slots holds back the rest");
    let (mut next, mut in_slots) = (0u32, 0);
    while next < 40 {
        net.settle();
        let mut lent = Vec::new();
        while let Some((addr, len)) = net.nodes[1].pkt_try_recv(hr).expect("recv") {
            assert_eq!(lent_bytes(addr, len), vec![next as u8; (next as usize * 7) % 257], "packet {next}");
            in_slots += inside(addr) as u32;
            next += 1;
            lent.push(addr);
        }
        // Release in the other order: slots come back in any order.
        for addr in lent.into_iter().rev() {
            net.nodes[1].pkt_release(addr).expect("release");
        }
        net.nodes[1].flush_owed();
    }
    assert_eq!(in_slots, 40, "held packets go into slots too once their credit comes");
    assert_eq!(net.nodes[1].refused(), 0);
    for rid in held {
        assert_eq!(net.nodes[0].take(rid).map(|d| d.status), Some(Status::Success));
    }
    // With the window free again, sends go straight into slots.
    net.settle();
    for i in 0..4u8 {
        assert_eq!(net.nodes[0].pkt_send(hs, &[i; 3], [0; 3]), Ok(None));
    }
    assert!(!net.nodes[0].pkt_ready(hs), "four slots written, no credit left");
    net.settle();
    for i in 0..4u8 {
        let (addr, len) = net.nodes[1].pkt_try_recv(hr).expect("recv").expect("a packet");
        assert!(inside(addr));
        assert_eq!(lent_bytes(addr, len), vec![i; 3]);
    }
}

#[test]
fn a_channel_without_shared_memory_sends_frames() {
    let mut net = Net::new(2, 22, |c| c.queue_limit = 4);
    let shared = net.share_slots(&[0]);
    let (hs, hr) = connected(&mut net, 0, false);
    assert!(shared.areas.lock().expect("test lock").is_empty());
    net.nodes[0].pkt_send(hs, b"framed", [0; 3]).expect("send");
    net.settle();
    let (addr, len) = net.nodes[1].pkt_try_recv(hr).expect("recv").expect("a packet");
    assert_eq!(lent_bytes(addr, len), b"framed");
}

#[test]
fn slot_packets_that_name_no_free_slot_are_refused() {
    let mut net = Net::new(2, 23, |c| {
        c.queue_limit = 4;
        c.max_payload = 256;
    });
    net.share_slots(&[]);
    let (hs, hr) = connected(&mut net, 0, false);
    net.nodes[0].pkt_send(hs, b"one", [0; 3]).expect("send");
    net.settle();
    let port = net.nodes[1].local(hr).expect("local").port;
    let sport = net.nodes[0].local(hs).expect("local").port;
    let forged = |slot: u64, len: u64| {
        let mut f = Frame::new(Kind::SlotPacket);
        (f.port, f.peer_port, f.seq, f.ack) = (port, sport, slot, len);
        f.encode_with(&[])
    };
    // Slot 0 holds "one" still; slot 9 does not exist (4 slots); slot 1 cannot hold 257 bytes.
    for bytes in [forged(0, 1), forged(9, 1), forged(1, 257)] {
        let _ = net.nodes[1].deliver(0, bytes);
    }
    assert_eq!(net.nodes[1].refused(), 3);
    assert_eq!(net.nodes[1].chan_available(hr, false), Ok(1));
}

proptest! {
    /// A peer that lies about slots and credits (slots it never wrote, bits it never got)
    /// makes the node refuse frames, never panic or lend a slot twice.
    #[test]
    fn forged_slot_packets_and_credits_never_panic(frames in proptest::collection::vec((0usize..3, 0u64..80, 0u64..600, 1u32..5), 0..40)) {
        let mut net = Net::new(2, 24, |c| {
            c.queue_limit = 4;
            c.max_payload = 512;
        });
        net.share_slots(&[]);
        let (hs, hr) = connected(&mut net, 0, false);
        let rport = net.nodes[1].local(hr).expect("local").port;
        let sport = net.nodes[0].local(hs).expect("local").port;
        for (k, seq, ack, count) in frames {
            let mut f = Frame::new([Kind::SlotPacket, Kind::Credit, Kind::Packet][k]);
            (f.port, f.peer_port, f.seq, f.ack, f.peer_rank) = (rport, sport, seq, ack, if k == 1 { count } else { 0 });
            let _ = net.nodes[1].deliver(0, f.encode_with(&[]));
            (f.port, f.peer_port) = (sport, rport);
            let _ = net.nodes[0].deliver(1, f.encode_with(&[]));
            let _ = net.nodes[0].pkt_send(hs, b"x", [0; 3]);
            net.settle();
            let mut seen = Vec::new();
            while let Ok(Some((addr, _))) = net.nodes[1].pkt_try_recv(hr) {
                prop_assert!(!seen.contains(&addr), "a slot lent twice");
                seen.push(addr);
            }
            for addr in seen {
                net.nodes[1].pkt_release(addr).expect("release");
            }
        }
    }
}
