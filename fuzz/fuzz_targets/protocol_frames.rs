//! Arbitrary frames from arbitrary peers into the protocol core, after the header decoder a
//! route applies: no panic, whatever a peer sends. Input: records of one peer byte, 40 header
//! bytes, a little-endian u16 payload length and the payload.
#![no_main]
use ferry_core::engine::matching::Pattern;
use ferry_core::engine::protocol::Protocol;
use ferry_core::transport::Deliver;
use ferry_wire::{Header, Limits, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let size = 4;
    let mut p = Protocol::new(0, size, 64);
    p.set_local(1, 64);
    let mut bufs = vec![vec![0u8; 256]; 6];
    let out = vec![7u8; 1000];
    for (i, b) in bufs.iter_mut().enumerate() {
        let pat = Pattern { ctx: (i % 2) as u32, src: if i % 3 == 0 { None } else { Some(1 + (i % 3) as u32) }, tag: if i % 2 == 0 { None } else { Some(i as i32) } };
        // SAFETY: the buffers outlive the protocol core (dropped after it below).
        unsafe { p.irecv(pat, b.as_mut_ptr(), b.len()) };
    }
    // SAFETY: `out` outlives the protocol core.
    unsafe { p.isend(2, 0, 1, out.as_ptr(), out.len(), false) };
    let limits = Limits::new(size);
    let mut rest = data;
    while rest.len() >= 1 + HEADER_LEN + 2 {
        let peer = u32::from(rest[0]) % (size + 1);
        let header = &rest[1..1 + HEADER_LEN];
        let len = u16::from_le_bytes([rest[1 + HEADER_LEN], rest[2 + HEADER_LEN]]) as usize;
        rest = &rest[3 + HEADER_LEN..];
        let payload = &rest[..len.min(rest.len())];
        rest = &rest[payload.len()..];
        let Ok(h) = Header::decode(header, &limits) else { continue };
        if h.len != payload.len() as u64 {
            continue;
        }
        if let Ok(mut sink) = p.header(peer, &h, true) {
            sink.put(payload);
            let _ = p.frame(peer, h, sink);
        }
        while p.next_frame().is_some() {}
        while let Some(r) = p.next_read() {
            p.read_done(r, Err("no memory of another process here".into()));
        }
    }
    drop(p);
    drop(bufs);
});
