//! Tests of the PMI-1 codec against what MPICH and Hydra send, malformed and hostile lines,
//! and round trips of every message.

use std::num::NonZeroI32;

use super::*;
use proptest::prelude::*;

fn cmd(line: &str) -> Result<Command, PmiError> {
    Command::parse(line.as_bytes())
}

fn resp(line: &str) -> Result<Response, PmiError> {
    Response::parse(line.as_bytes())
}

#[test]
fn parses_what_mpich_4_0_sends() {
    assert_eq!(cmd("cmd=init pmi_version=1 pmi_subversion=1\n"), Ok(Command::Init { version: 1, subversion: 1 }));
    assert_eq!(cmd("cmd=get_maxes\n"), Ok(Command::GetMaxes));
    assert_eq!(cmd("cmd=get_appnum\n"), Ok(Command::GetAppnum));
    assert_eq!(cmd("cmd=get_my_kvsname\n"), Ok(Command::GetMyKvsname));
    assert_eq!(cmd("cmd=get_universe_size\n"), Ok(Command::GetUniverseSize));
    assert_eq!(
        cmd("cmd=put kvsname=kvs_1_0 key=bc-3 value=tcp://10.0.0.1:4000\n"),
        Ok(Command::Put { kvsname: Some("kvs_1_0".into()), key: "bc-3".into(), value: "tcp://10.0.0.1:4000".into() })
    );
    assert_eq!(
        cmd("cmd=get kvsname=kvs_1_0 key=PMI_process_mapping\n"),
        Ok(Command::Get { kvsname: Some("kvs_1_0".into()), key: "PMI_process_mapping".into() })
    );
    assert_eq!(cmd("cmd=barrier_in\n"), Ok(Command::BarrierIn));
    assert_eq!(cmd("cmd=finalize\n"), Ok(Command::Finalize));
    assert_eq!(cmd("cmd=abort exitcode=3\n"), Ok(Command::Abort { exitcode: 3, message: None }));
}

#[test]
fn parses_what_hydra_4_0_answers() {
    // Captured from Debian's mpiexec.hydra 4.0.2.
    assert_eq!(
        resp("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"),
        Ok(Response::ResponseToInit { version: 1, subversion: 1 })
    );
    assert_eq!(
        resp("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"),
        Ok(Response::Maxes { kvsname_max: 256, keylen_max: 64, vallen_max: 1024 })
    );
    assert_eq!(resp("cmd=appnum appnum=0\n"), Ok(Response::Appnum { appnum: 0 }));
    assert_eq!(
        resp("cmd=my_kvsname kvsname=kvs_5740_0_1382544503_vm\n"),
        Ok(Response::MyKvsname { kvsname: "kvs_5740_0_1382544503_vm".into() })
    );
    assert_eq!(resp("cmd=universe_size size=-1\n"), Ok(Response::UniverseSize { size: -1 }));
    assert_eq!(resp("cmd=put_result rc=0 msg=success\n"), Ok(Response::PutResult));
    assert_eq!(
        resp("cmd=get_result rc=0 msg=success value=(vector,(0,1,1))\n"),
        Ok(Response::GetResult { value: "(vector,(0,1,1))".into() })
    );
    assert_eq!(
        resp("cmd=get_result rc=-1 msg=key_nokey_not_found value=unknown\n"),
        Ok(Response::Failed {
            kind: ResponseKind::GetResult,
            rc: NonZeroI32::new(-1).unwrap(),
            msg: "key_nokey_not_found".into()
        })
    );
    assert_eq!(resp("cmd=barrier_out\n"), Ok(Response::BarrierOut));
    assert_eq!(resp("cmd=finalize_ack\n"), Ok(Response::FinalizeAck));
}

#[test]
fn formats_exactly_like_hydra() {
    let lines = [
        (
            Response::ResponseToInit { version: 1, subversion: 1 },
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
        ),
        (
            Response::Maxes { kvsname_max: 256, keylen_max: 64, vallen_max: 1024 },
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
        ),
        (Response::Appnum { appnum: 0 }, "cmd=appnum appnum=0\n"),
        (Response::UniverseSize { size: 4 }, "cmd=universe_size size=4\n"),
        (Response::PutResult, "cmd=put_result rc=0 msg=success\n"),
        (Response::GetResult { value: "v".into() }, "cmd=get_result rc=0 msg=success value=v\n"),
        (Response::BarrierOut, "cmd=barrier_out\n"),
        (Response::FinalizeAck, "cmd=finalize_ack\n"),
    ];
    for (r, want) in lines {
        assert_eq!(r.to_line().unwrap(), want);
    }
    assert_eq!(
        Command::Put { kvsname: Some("k".into()), key: "a".into(), value: "b".into() }.to_line().unwrap(),
        "cmd=put kvsname=k key=a value=b\n"
    );
    assert_eq!(Command::Init { version: 1, subversion: 1 }.to_line().unwrap(), "cmd=init pmi_version=1 pmi_subversion=1\n");
}

#[test]
fn abort_message_runs_to_the_end_of_the_line() {
    // MPICH 4.1+ writes the message raw, spaces and '=' included.
    assert_eq!(
        cmd("cmd=abort exitcode=7 message=oh no: x=1 failed  \n"),
        Ok(Command::Abort { exitcode: 7, message: Some("oh no: x=1 failed  ".into()) })
    );
    assert_eq!(cmd("cmd=abort\n"), Ok(Command::Abort { exitcode: 1, message: None }));
    assert_eq!(cmd("cmd=abort message=\n"), Ok(Command::Abort { exitcode: 1, message: Some(String::new()) }));
    // Elsewhere a space still ends a value.
    assert!(matches!(cmd("cmd=put key=a value=b c\n"), Err(PmiError::MissingValue(_))));
}

#[test]
fn refuses_malformed_lines() {
    assert_eq!(cmd("garbage\n"), Err(PmiError::MissingCmd));
    assert_eq!(cmd(""), Err(PmiError::MissingCmd));
    assert_eq!(cmd("cmd=\n"), Err(PmiError::BadName(String::new())));
    assert_eq!(cmd("cmd=frobnicate\n"), Err(PmiError::UnknownCommand("frobnicate".into())));
    assert!(matches!(cmd("cmd=init pmi_version=1\n"), Err(PmiError::MissingAttribute { attr: "pmi_subversion", .. })));
    assert!(matches!(cmd("cmd=init pmi_version=+1 pmi_subversion=1\n"), Err(PmiError::BadValue { .. })));
    assert!(matches!(cmd("cmd=init pmi_version=99999999999 pmi_subversion=1\n"), Err(PmiError::BadValue { .. })));
    assert!(matches!(cmd("cmd=put key=a key=b value=c\n"), Err(PmiError::DuplicateAttribute(_))));
    assert!(matches!(cmd("cmd=put cmd=get key=a value=c\n"), Err(PmiError::DuplicateAttribute(_))));
    assert!(matches!(cmd("cmd=put key= value=c\n"), Err(PmiError::MissingValue(_))));
    assert!(matches!(cmd("cmd=put key=a\\b value=c\n"), Err(PmiError::BadByte { byte: b'\\', offset: 13 })));
    assert!(matches!(cmd("cmd=put ke*y=a value=c\n"), Err(PmiError::BadName(_))));
    assert!(matches!(cmd("cmd=put =a value=c\n"), Err(PmiError::BadName(_))));
    assert!(matches!(cmd("cmd=barrier_in\r\n"), Err(PmiError::BadByte { byte: b'\r', .. })));
    assert!(matches!(cmd("cmd=barrier_in\n\n"), Err(PmiError::BadByte { byte: b'\n', .. })));
    assert!(matches!(Command::parse(b"cmd=put key=\xc3\xa9 value=c"), Err(PmiError::BadByte { byte: 0xc3, .. })));
    let long = format!("cmd=put key=a value={}\n", "x".repeat(MAX_LINE));
    assert_eq!(cmd(&long), Err(PmiError::LineTooLong { max: MAX_LINE }));
    assert!(matches!(resp("cmd=maxes kvsname_max=-1 keylen_max=1 vallen_max=1\n"), Err(PmiError::BadValue { .. })));
    assert!(matches!(resp("cmd=error\n"), Err(PmiError::BadValue { .. })));
    assert!(matches!(resp("cmd=nope\n"), Err(PmiError::UnknownResponse(_))));
}

#[test]
fn tolerates_extra_spaces_and_unknown_attributes() {
    assert_eq!(cmd("cmd=barrier_in  group=WORLD \n"), Ok(Command::BarrierIn));
    assert_eq!(
        resp("cmd=maxes  kvsname_max=1 keylen_max=2  vallen_max=3 extra=x"),
        Ok(Response::Maxes { kvsname_max: 1, keylen_max: 2, vallen_max: 3 })
    );
}

#[test]
fn formatting_refuses_what_would_not_survive() {
    let bad = Command::Put { kvsname: None, key: "a b".into(), value: "c".into() };
    assert!(matches!(bad.to_line(), Err(PmiError::InvalidArgument { what: "key", .. })));
    let bad = Command::Put { kvsname: None, key: "a".into(), value: String::new() };
    assert!(matches!(bad.to_line(), Err(PmiError::InvalidArgument { what: "value", .. })));
    let bad = Command::Abort { exitcode: 1, message: Some("two\nlines".into()) };
    assert!(bad.to_line().is_err());
    let bad = Command::Put { kvsname: None, key: "a".into(), value: "x".repeat(MAX_LINE) };
    assert!(matches!(bad.to_line(), Err(PmiError::TooLong { .. })));
}

#[test]
fn refusal_messages_are_tokens() {
    let r = Response::refusal(ResponseKind::PutResult, "value is 2000 bytes; limit 1024");
    let line = r.to_line().unwrap();
    assert_eq!(line, "cmd=put_result rc=-1 msg=value_is_2000_bytes;_limit_1024\n");
    assert_eq!(Response::parse(line.as_bytes()), Ok(r));
    assert_eq!(msg_token(""), "_");
}

#[test]
fn command_name_of_malformed_lines() {
    assert_eq!(command_name(b"cmd=put key"), Some("put"));
    assert_eq!(command_name(b"cmd=barrier_in"), Some("barrier_in"));
    assert_eq!(command_name(b"cmd=get\n"), Some("get"));
    assert_eq!(command_name(b"cmd=ge*t"), None);
    assert_eq!(command_name(b"garbage"), None);
    assert_eq!(command_name(b"cmd="), None);
}

#[test]
fn splitter_cuts_lines_and_survives_overlong_ones() {
    let mut s = LineSplitter::new();
    s.push(b"cmd=a\ncmd=");
    assert_eq!(s.next_line(), Some(Ok(b"cmd=a".to_vec())));
    assert_eq!(s.next_line(), None);
    assert_eq!(s.pending(), 4);
    s.push(b"b\n");
    assert_eq!(s.next_line(), Some(Ok(b"cmd=b".to_vec())));
    s.push(&vec![b'x'; MAX_LINE + 10]);
    assert_eq!(s.next_line(), Some(Err(PmiError::LineTooLong { max: MAX_LINE })));
    assert_eq!(s.next_line(), None);
    s.push(b"still the long one\ncmd=c\n");
    assert_eq!(s.next_line(), Some(Ok(b"cmd=c".to_vec())));
    assert_eq!(s.next_line(), None);
    // An overlong line that arrives with its newline in one chunk.
    let mut long = vec![b'y'; MAX_LINE + 1];
    long.extend_from_slice(b"\ncmd=d\n");
    s.push(&long);
    assert_eq!(s.next_line(), Some(Err(PmiError::LineTooLong { max: MAX_LINE })));
    assert_eq!(s.next_line(), Some(Ok(b"cmd=d".to_vec())));
    assert_eq!(s.pending(), 0);
}

// A PMI value: printable ASCII without space or backslash.
const VALUE: &str = "[!-\\[\\]-~]{1,40}";
const NAME: &str = "[a-zA-Z0-9_/-]{1,20}";

fn any_command() -> impl Strategy<Value = Command> {
    prop_oneof![
        (any::<i32>(), any::<i32>()).prop_map(|(version, subversion)| Command::Init { version, subversion }),
        Just(Command::GetMaxes),
        Just(Command::GetAppnum),
        Just(Command::GetMyKvsname),
        Just(Command::GetUniverseSize),
        (proptest::option::of(VALUE), VALUE, VALUE).prop_map(|(kvsname, key, value)| Command::Put { kvsname, key, value }),
        (proptest::option::of(VALUE), VALUE).prop_map(|(kvsname, key)| Command::Get { kvsname, key }),
        Just(Command::BarrierIn),
        Just(Command::Finalize),
        (any::<i32>(), proptest::option::of("[ -~]{0,60}"))
            .prop_map(|(exitcode, message)| Command::Abort { exitcode, message }),
    ]
}

fn any_response() -> impl Strategy<Value = Response> {
    prop_oneof![
        (any::<i32>(), any::<i32>()).prop_map(|(version, subversion)| Response::ResponseToInit { version, subversion }),
        (any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(kvsname_max, keylen_max, vallen_max)| Response::Maxes {
            kvsname_max,
            keylen_max,
            vallen_max
        }),
        any::<i32>().prop_map(|appnum| Response::Appnum { appnum }),
        VALUE.prop_map(|kvsname| Response::MyKvsname { kvsname }),
        any::<i32>().prop_map(|size| Response::UniverseSize { size }),
        Just(Response::PutResult),
        VALUE.prop_map(|value| Response::GetResult { value }),
        Just(Response::BarrierOut),
        Just(Response::FinalizeAck),
        (0..ResponseKind::ALL.len(), any::<i32>().prop_filter("non-zero", |rc| *rc != 0), proptest::option::of(VALUE))
            .prop_map(|(k, rc, msg)| Response::Failed {
                kind: ResponseKind::ALL[k],
                rc: NonZeroI32::new(rc).unwrap(),
                msg: msg.unwrap_or_default()
            }),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = Command::parse(&bytes);
        let _ = Response::parse(&bytes);
        let _ = command_name(&bytes);
        let mut s = LineSplitter::new();
        s.push(&bytes);
        while s.next_line().is_some() {}
    }

    #[test]
    fn almost_valid_lines_never_panic(
        cmd in NAME,
        attrs in proptest::collection::vec(("[a-z_=]{0,8}", "[ -~]{0,12}"), 0..6),
        nl in any::<bool>(),
    ) {
        let mut line = format!("cmd={cmd}");
        for (k, v) in attrs {
            line.push_str(&format!(" {k}={v}"));
        }
        if nl { line.push('\n'); }
        let _ = Command::parse(line.as_bytes());
        let _ = Response::parse(line.as_bytes());
    }

    #[test]
    fn commands_round_trip(c in any_command()) {
        let line = c.to_line().unwrap();
        prop_assert!(line.len() <= MAX_LINE);
        prop_assert_eq!(Command::parse(line.as_bytes()), Ok(c.clone()));
        prop_assert_eq!(command_name(line.as_bytes()), Some(c.name()));
    }

    #[test]
    fn responses_round_trip(r in any_response()) {
        let line = r.to_line().unwrap();
        prop_assert_eq!(Response::parse(line.as_bytes()), Ok(r));
    }

    #[test]
    fn splitting_does_not_depend_on_chunking(
        lines in proptest::collection::vec("[ -~]{0,30}", 0..8),
        cuts in proptest::collection::vec(0usize..400, 0..8),
    ) {
        let stream: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
        cuts.sort();
        let mut s = LineSplitter::new();
        let mut got = Vec::new();
        let mut from = 0;
        for c in cuts.into_iter().chain([stream.len()]) {
            s.push(&stream[from..c]);
            from = c;
            while let Some(line) = s.next_line() {
                got.push(String::from_utf8(line.unwrap()).unwrap());
            }
        }
        prop_assert_eq!(got, lines);
    }
}
