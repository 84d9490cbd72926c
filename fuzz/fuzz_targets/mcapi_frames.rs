//! Arbitrary frames from three peers into an MCAPI node with an endpoint and open channels:
//! no panic, and the node still answers a message sent to itself afterwards.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mcapi::core::{Config, Node};

fuzz_target!(|data: &[u8]| {
    let mut node = Node::new(Config::new(0, 0, 10));
    let ep = node.create_endpoint(Some(1)).expect("create");
    for chunk in data.split(|b| *b == 0xa5) {
        let from = chunk.first().map_or(1, |b| 1 + (*b as u32 % 3));
        let _ = node.deliver(from, chunk.get(1..).unwrap_or(&[]).to_vec());
        while node.next_out().is_some() {}
    }
    let _ = node.msg_send(ep, ep, b"still here", 0, [0; 3]);
    while node.next_out().is_some() {}
});
