//! Arbitrary bytes on the pipe between `ferry run` and an agent: both readers must decode
//! or refuse, never panic, and a decoded message must encode back to what was read.
#![no_main]
use ferry_wire::launch::FrameReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut to = FrameReader::new();
    let mut from = FrameReader::new();
    to.push(data);
    from.push(data);
    while let Some(Ok(m)) = to.next_to_agent() {
        let mut again = FrameReader::new();
        again.push(&m.encode());
        assert_eq!(again.next_to_agent(), Some(Ok(m)));
    }
    while let Some(Ok(m)) = from.next_from_agent() {
        let mut again = FrameReader::new();
        again.push(&m.encode());
        assert_eq!(again.next_from_agent(), Some(Ok(m)));
    }
});
