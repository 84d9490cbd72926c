//! Arbitrary ring records from a local peer into its shared-memory route and on to the
//! protocol core, read both ways the engine reads them (a batch, and one record in place):
//! no panic, whatever the peer writes. Input: records of a flag byte (which way to read, and
//! whether the header is the 16-byte short one or a full 40-byte one), the header, a
//! little-endian u16 payload length and the payload.
#![no_main]
use ferry_core::engine::matching::Pattern;
use ferry_core::engine::protocol::Protocol;
use ferry_core::transport::shm::{heap_ring, Link, ShmRoute};
use ferry_core::transport::Route;
use ferry_wire::{Limits, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (size, me, peer) = (3u32, 0u32, 1u32);
    let mut p = Protocol::new(me, size, 64);
    p.set_local(peer, 64);
    let Ok(ours) = heap_ring(1 << 12) else { return };
    let Ok(theirs) = heap_ring(1 << 12) else { return };
    let mut writer = theirs.producer;
    let mut route = ShmRoute::new(Link { tx: ours.producer, rx: theirs.consumer }, me);
    let limits = Limits { world_size: size, max_payload: 256 };
    let mut buf = vec![0u8; 64];
    let mut rest = data;
    while rest.len() >= 3 {
        let flag = rest[0];
        let hlen = if flag & 1 == 0 { 16 } else { HEADER_LEN };
        if rest.len() < 1 + hlen + 2 {
            break;
        }
        let header = &rest[1..1 + hlen];
        let len = u16::from_le_bytes([rest[1 + hlen], rest[2 + hlen]]) as usize % 512;
        rest = &rest[3 + hlen..];
        let payload = &rest[..len.min(rest.len())];
        rest = &rest[payload.len()..];
        if payload.len() + hlen <= writer.max_frame() && !writer.try_write(header, payload) {
            let _ = route.recv(peer, &mut p, &limits);
        }
        if flag & 2 != 0 {
            let pat = Pattern { ctx: u32::from(flag >> 4), src: Some(peer), tag: None };
            if p.may_recv_in_place(&pat) {
                route.take_next(peer, &limits, &mut |h, payload| {
                    // SAFETY: `buf` outlives the call and holds 64 bytes.
                    unsafe { p.recv_in_place(peer, &pat, h, payload, buf.as_mut_ptr(), buf.len()) }.is_some()
                });
            }
        } else if route.recv(peer, &mut p, &limits).is_err() {
            return;
        }
    }
});
