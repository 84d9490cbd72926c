//! The launcher's PMI-1 server for one job of N ranks, without I/O: feed it a rank's bytes or
//! lines, get back [`Action`]s (reply to a rank, reply to all, a rank aborted or finalized).
//! It knows nothing of sockets or processes; `ferry run` drives it from its event loop.
//!
//! Semantics, where PMI-1 leaves a choice:
//! - a rank must `init` before anything but `abort`; after `finalize` it may only `abort`;
//! - a `put` is visible to `get` at once (PMI-1 only promises it after the next barrier);
//!   a key may be overwritten, except the ones the launcher seeded;
//! - the barrier releases when all N ranks have entered; once a rank has finalized, aborted
//!   or gone, a barrier can never complete and the server says so ([`Action::BarrierBroken`])
//!   instead of letting the others hang;
//! - a line that cannot be served is answered with `rc=-1` under the reply name its sender
//!   waits for (or `cmd=error` when there is none), and logged; the server carries on.

use std::collections::HashMap;

use super::pmi_wire::{check_value, command_name, response_kind_of, Command, LineSplitter, PmiError, Response, ResponseKind, SpawnRequest};
use super::{is_job_secret, JOB_SECRET_KEY, PMI_PROCESS_MAPPING_KEY};

/// Limits the server advertises in `cmd=maxes`; the same as Hydra's, so a program sees the
/// same limits under `ferry run` and under `mpiexec.hydra`. As in C's PMI API they count a
/// terminating NUL: the longest key is `KEYLEN_MAX - 1` bytes, the longest value
/// `VALLEN_MAX - 1` (Hydra silently cuts longer ones; this server refuses them).
pub const KVSNAME_MAX: u32 = 256;
pub const KEYLEN_MAX: u32 = 64;
pub const VALLEN_MAX: u32 = 1024;

/// Where a rank stands in its PMI life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankState {
    /// Has not sent `init` (a program that does not use PMI stays here).
    NotInitialized,
    Initialized,
    Finalized,
    /// Sent `abort`.
    Aborted,
}

/// What the driver must do after feeding the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write `bytes` (one or more complete lines) to rank `rank`.
    Reply { rank: u32, bytes: Vec<u8> },
    /// Write `bytes` to every rank (the barrier's release).
    ReplyAll { bytes: Vec<u8> },
    /// Rank `rank` asked to abort the job (MPI_Abort) with this exit code.
    Abort { rank: u32, code: i32, message: Option<String> },
    /// Rank `rank` completed PMI finalize.
    Finalized { rank: u32 },
    /// Rank `rank` sent a request that could not be served; it has been answered with an
    /// error (the `Reply` precedes this action) and the refusal logged.
    Refused { rank: u32, error: PmiError },
    /// The barrier can no longer complete: rank `gone` finalized, aborted or left while the
    /// ranks in `waiting` wait in it. Reported once per job.
    BarrierBroken { gone: u32, waiting: Vec<u32> },
    /// Rank `rank` asks for a job of children (`ferry_spawn`); the driver starts it or not
    /// and answers with [`PmiServer::answer`].
    Spawn { rank: u32, request: SpawnRequest },
    /// Rank `rank` asks the name service, which the driver keeps across its jobs; it answers
    /// with [`PmiServer::answer`].
    Name { rank: u32, request: NameRequest },
}

/// A request to the name service (`MPI_Publish_name` and its kin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameRequest {
    Publish { service: String, port: String },
    Lookup { service: String },
    Unpublish { service: String },
}

#[derive(Debug)]
struct RankSlot {
    state: RankState,
    in_barrier: bool,
    gone: bool,
    splitter: LineSplitter,
}

/// The PMI-1 server state of one job.
#[derive(Debug)]
pub struct PmiServer {
    size: u32,
    kvsname: String,
    kvs: HashMap<String, String>,
    /// Keys the launcher seeded: ranks may read them, not overwrite them.
    seeded: Vec<String>,
    ranks: Vec<RankSlot>,
    barrier_waiting: u32,
    barrier_broken: bool,
    /// Fault-tolerant MPI ([`set_recovery`](Self::set_recovery)): a rank that died no longer
    /// counts in the barrier.
    recovery: bool,
    /// What `get_universe_size` answers (the job's size unless the driver says more).
    universe: i32,
}

impl PmiServer {
    /// A server for `size` ranks whose key-value space is called `kvsname` and is seeded with
    /// the job secret (see [`JOB_SECRET_KEY`]) and `PMI_process_mapping` (all ranks on one
    /// node, as `ferry run` starts them).
    pub fn new(size: u32, kvsname: &str, job_secret: &str) -> Result<PmiServer, PmiError> {
        if size == 0 {
            return Err(PmiError::InvalidArgument { what: "job size", value: "0".into(), why: "a job has at least one rank" });
        }
        check_value("kvsname", kvsname)?;
        if kvsname.len() >= KVSNAME_MAX as usize {
            return Err(PmiError::TooLong { what: "kvsname", len: kvsname.len(), max: KVSNAME_MAX as usize - 1 });
        }
        if !is_job_secret(job_secret) {
            return Err(PmiError::InvalidArgument {
                what: "job secret",
                value: String::from("(not shown)"),
                why: "expected 64 lowercase hex digits",
            });
        }
        let mut kvs = HashMap::new();
        kvs.insert(JOB_SECRET_KEY.to_owned(), job_secret.to_owned());
        // MPICH's format: (vector,(first node, node count, ranks per node)).
        kvs.insert(PMI_PROCESS_MAPPING_KEY.to_owned(), format!("(vector,(0,1,{size}))"));
        let ranks = (0..size)
            .map(|_| RankSlot { state: RankState::NotInitialized, in_barrier: false, gone: false, splitter: LineSplitter::new() })
            .collect();
        let seeded = vec![JOB_SECRET_KEY.to_owned(), PMI_PROCESS_MAPPING_KEY.to_owned()];
        Ok(PmiServer { size, kvsname: kvsname.to_owned(), kvs, seeded, ranks, barrier_waiting: 0, barrier_broken: false, recovery: false, universe: i32::try_from(size).unwrap_or(i32::MAX) })
    }

    /// Recovery enabled (`ferry run --enable-recovery`): the survivors of a rank's death go
    /// on, so a barrier waits only for the ranks still running; a rank that finalized still
    /// breaks it.
    pub fn set_recovery(&mut self, yes: bool) {
        self.recovery = yes;
    }

    /// Put `key` = `value` into the key-value space before the ranks start, out of their
    /// reach: a launcher's facts about the job (where its ranks run, its relays). Replaces
    /// an earlier seed, `PMI_process_mapping` included.
    pub fn seed(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        check_value("key", key)?;
        check_value("value", value)?;
        if key.len() >= KEYLEN_MAX as usize || value.len() >= VALLEN_MAX as usize {
            return Err(PmiError::TooLong { what: "seeded key or value", len: key.len().max(value.len()), max: VALLEN_MAX as usize - 1 });
        }
        if key == JOB_SECRET_KEY {
            return Err(PmiError::InvalidArgument { what: "seeded key", value: key.into(), why: "the job secret is seeded once, by new" });
        }
        if !self.seeded.iter().any(|k| k == key) {
            self.seeded.push(key.to_owned());
        }
        self.kvs.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    /// How many processes the launcher can usefully run (`MPI_UNIVERSE_SIZE`).
    pub fn set_universe_size(&mut self, size: u32) {
        self.universe = i32::try_from(size).unwrap_or(i32::MAX);
    }

    /// The reply to a request the driver served ([`Action::Spawn`], [`Action::Name`]).
    pub fn answer(&self, rank: u32, response: Response) -> Action {
        self.reply(rank, response)
    }

    /// The value of `key` in the key-value space, as a rank would get it.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.kvs.get(key).map(String::as_str)
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// Where `rank` stands; `None` for a rank outside the job.
    pub fn state(&self, rank: u32) -> Option<RankState> {
        self.ranks.get(rank as usize).map(|s| s.state)
    }

    /// Feed bytes read from `rank`'s channel: whole lines are served, a partial one is kept.
    pub fn receive(&mut self, rank: u32, bytes: &[u8]) -> Vec<Action> {
        let mut actions = Vec::new();
        let Some(slot) = self.ranks.get_mut(rank as usize) else {
            crate::error!("pmi", "bytes from rank {rank}, outside a job of {} ranks", self.size);
            return actions;
        };
        if slot.gone {
            return actions;
        }
        slot.splitter.push(bytes);
        while let Some(line) = self.ranks[rank as usize].splitter.next_line() {
            match line {
                Ok(line) => actions.extend(self.handle_line(rank, &line)),
                Err(e) => actions.extend(self.refuse(rank, ResponseKind::Error, e, b"")),
            }
        }
        actions
    }

    /// Serve one line from `rank` (with or without its newline).
    pub fn handle_line(&mut self, rank: u32, line: &[u8]) -> Vec<Action> {
        match Command::parse(line) {
            Ok(command) => self.handle_command(rank, command),
            Err(e) => {
                let kind = command_name(line).and_then(response_kind_of).unwrap_or(ResponseKind::Error);
                self.refuse(rank, kind, e, line)
            }
        }
    }

    /// Serve one parsed command from `rank`.
    pub fn handle_command(&mut self, rank: u32, command: Command) -> Vec<Action> {
        let Some(slot) = self.ranks.get(rank as usize) else {
            crate::error!("pmi", "{} from rank {rank}, outside a job of {} ranks", command.name(), self.size);
            return Vec::new();
        };
        let state = slot.state;
        crate::debug!("pmi", "rank {rank}: {command:?}");
        let kind = command.response_kind();
        match (command, state) {
            (Command::Abort { exitcode, message }, _) => {
                self.leave_barrier(rank);
                self.ranks[rank as usize].state = RankState::Aborted;
                let mut actions = vec![Action::Abort { rank, code: exitcode, message }];
                actions.extend(self.barrier_break(rank));
                actions
            }
            (_, RankState::Aborted) => self.refuse_semantic(rank, kind, "the job is aborting"),
            (_, RankState::Finalized) => self.refuse_semantic(rank, kind, "PMI is already finalized for this rank"),
            (Command::Init { version, subversion }, _) => {
                if version == 1 && (0..=1).contains(&subversion) {
                    self.ranks[rank as usize].state = RankState::Initialized;
                    vec![self.reply(rank, Response::ResponseToInit { version: 1, subversion: 1 })]
                } else {
                    self.refuse_semantic(
                        rank,
                        kind,
                        &format!("PMI version {version}.{subversion} is not supported; this server speaks 1.1"),
                    )
                }
            }
            (_, RankState::NotInitialized) => self.refuse_semantic(rank, kind, "init must come first"),
            (Command::GetMaxes, _) => {
                vec![self
                    .reply(rank, Response::Maxes { kvsname_max: KVSNAME_MAX, keylen_max: KEYLEN_MAX, vallen_max: VALLEN_MAX })]
            }
            (Command::GetAppnum, _) => vec![self.reply(rank, Response::Appnum { appnum: 0 })],
            (Command::GetMyKvsname, _) => vec![self.reply(rank, Response::MyKvsname { kvsname: self.kvsname.clone() })],
            (Command::GetUniverseSize, _) => {
                vec![self.reply(rank, Response::UniverseSize { size: self.universe })]
            }
            (Command::Put { kvsname, key, value }, _) => self.put(rank, kvsname, key, value),
            (Command::Get { kvsname, key }, _) => self.get(rank, kvsname, &key),
            (Command::BarrierIn, _) => self.barrier_in(rank),
            (Command::Finalize, _) => self.finalize(rank),
            (Command::Spawn { request }, _) => match SpawnRequest::decode(&request) {
                Ok(request) => vec![Action::Spawn { rank, request }],
                Err(e) => self.refuse(rank, ResponseKind::SpawnResult, e, b"cmd=ferry_spawn"),
            },
            (Command::PublishName { service, port }, _) => vec![Action::Name { rank, request: NameRequest::Publish { service, port } }],
            (Command::LookupName { service }, _) => vec![Action::Name { rank, request: NameRequest::Lookup { service } }],
            (Command::UnpublishName { service }, _) => vec![Action::Name { rank, request: NameRequest::Unpublish { service } }],
        }
    }

    /// `rank`'s channel is gone (the process exited or closed it). Later bytes are ignored.
    pub fn rank_gone(&mut self, rank: u32) -> Vec<Action> {
        let Some(slot) = self.ranks.get_mut(rank as usize) else { return Vec::new() };
        if slot.gone {
            return Vec::new();
        }
        slot.gone = true;
        slot.splitter = LineSplitter::new();
        self.leave_barrier(rank);
        if self.recovery && !matches!(self.ranks[rank as usize].state, RankState::Finalized) {
            return self.barrier_release();
        }
        self.barrier_break(rank)
    }

    /// A rank that aborts or leaves while in the barrier no longer counts as waiting.
    fn leave_barrier(&mut self, rank: u32) {
        let slot = &mut self.ranks[rank as usize];
        if slot.in_barrier {
            slot.in_barrier = false;
            self.barrier_waiting -= 1;
        }
    }

    fn put(&mut self, rank: u32, kvsname: Option<String>, key: String, value: String) -> Vec<Action> {
        let kind = Some(ResponseKind::PutResult);
        if let Some(why) = self.foreign_kvs(kvsname.as_deref()) {
            return self.refuse_semantic(rank, kind, &why);
        }
        if key.len() >= KEYLEN_MAX as usize {
            return self.refuse_semantic(rank, kind, &format!("key is {} bytes; the limit is {}", key.len(), KEYLEN_MAX - 1));
        }
        if value.len() >= VALLEN_MAX as usize {
            return self.refuse_semantic(rank, kind, &format!("value is {} bytes; the limit is {}", value.len(), VALLEN_MAX - 1));
        }
        if self.seeded.iter().any(|k| *k == key) {
            return self.refuse_semantic(rank, kind, &format!("key {key} is reserved"));
        }
        self.kvs.insert(key, value);
        vec![self.reply(rank, Response::PutResult)]
    }

    fn get(&mut self, rank: u32, kvsname: Option<String>, key: &str) -> Vec<Action> {
        if let Some(why) = self.foreign_kvs(kvsname.as_deref()) {
            return self.refuse_semantic(rank, Some(ResponseKind::GetResult), &why);
        }
        // Not found is an ordinary answer, not a refusal: rc=-1 in Hydra's words.
        let response = match self.kvs.get(key) {
            Some(value) => Response::GetResult { value: value.clone() },
            None => Response::refusal(ResponseKind::GetResult, &format!("key_{key}_not_found")),
        };
        vec![self.reply(rank, response)]
    }

    fn barrier_in(&mut self, rank: u32) -> Vec<Action> {
        if self.ranks[rank as usize].in_barrier {
            return self.refuse_semantic(rank, Some(ResponseKind::BarrierOut), "this rank is already in the barrier");
        }
        self.ranks[rank as usize].in_barrier = true;
        self.barrier_waiting += 1;
        let absent = self
            .ranks
            .iter()
            .position(|s| !s.in_barrier && ((s.gone && !self.recovery) || matches!(s.state, RankState::Finalized | RankState::Aborted)));
        if let Some(absent) = absent {
            return self.barrier_break(absent as u32);
        }
        self.barrier_release()
    }

    /// Release the barrier when every rank that counts is in it.
    fn barrier_release(&mut self) -> Vec<Action> {
        let dead = if self.recovery { self.ranks.iter().filter(|s| s.gone && !s.in_barrier).count() as u32 } else { 0 };
        if self.barrier_waiting == 0 || self.barrier_waiting + dead < self.size {
            return Vec::new();
        }
        for slot in &mut self.ranks {
            slot.in_barrier = false;
        }
        self.barrier_waiting = 0;
        let bytes = Response::BarrierOut.to_line().expect("barrier_out has no fields to validate").into_bytes();
        vec![Action::ReplyAll { bytes }]
    }

    fn finalize(&mut self, rank: u32) -> Vec<Action> {
        self.leave_barrier(rank);
        self.ranks[rank as usize].state = RankState::Finalized;
        let mut actions = vec![self.reply(rank, Response::FinalizeAck), Action::Finalized { rank }];
        actions.extend(self.barrier_break(rank));
        actions
    }

    /// Report, once, that ranks wait in a barrier that `absent` will never enter.
    fn barrier_break(&mut self, absent: u32) -> Vec<Action> {
        let waiting: Vec<u32> = (0..self.size).filter(|&r| self.ranks[r as usize].in_barrier).collect();
        if waiting.is_empty() || self.barrier_broken {
            return Vec::new();
        }
        self.barrier_broken = true;
        vec![Action::BarrierBroken { gone: absent, waiting }]
    }

    /// Why `kvsname` is not this job's space, if it is not.
    fn foreign_kvs(&self, kvsname: Option<&str>) -> Option<String> {
        match kvsname {
            Some(k) if k != self.kvsname => Some(format!("kvsname {k} is not this job's ({})", self.kvsname)),
            _ => None,
        }
    }

    fn reply(&self, rank: u32, response: Response) -> Action {
        let line = response.to_line().expect("replies are built from validated kvsnames, keys, values and msg tokens");
        Action::Reply { rank, bytes: line.into_bytes() }
    }

    /// A well-formed request this server will not serve.
    fn refuse_semantic(&mut self, rank: u32, kind: Option<ResponseKind>, why: &str) -> Vec<Action> {
        crate::info!("pmi", "refused a request from rank {rank}: {why}");
        let kind = kind.unwrap_or(ResponseKind::Error);
        vec![
            self.reply(rank, Response::refusal(kind, why)),
            Action::Refused { rank, error: PmiError::Refused { cmd: kind.name(), rc: -1, msg: why.to_owned() } },
        ]
    }

    /// A line that does not parse.
    fn refuse(&mut self, rank: u32, kind: ResponseKind, error: PmiError, line: &[u8]) -> Vec<Action> {
        let excerpt: String = line.iter().take(120).flat_map(|b| b.escape_ascii()).map(char::from).collect();
        crate::warn!("pmi", "rank {rank} sent a malformed PMI line ({error}): \"{excerpt}\"");
        vec![self.reply(rank, Response::refusal(kind, &error.to_string())), Action::Refused { rank, error }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    fn server(n: u32) -> PmiServer {
        PmiServer::new(n, "kvs_42_0", SECRET).unwrap()
    }

    /// The replies in `actions` addressed to `rank` (directly or to all), as text.
    fn replies_to(actions: &[Action], rank: u32) -> Vec<String> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Reply { rank: r, bytes } if *r == rank => Some(String::from_utf8(bytes.clone()).unwrap()),
                Action::ReplyAll { bytes } => Some(String::from_utf8(bytes.clone()).unwrap()),
                _ => None,
            })
            .collect()
    }

    fn ask(s: &mut PmiServer, rank: u32, line: &str) -> Vec<String> {
        replies_to(&s.handle_line(rank, line.as_bytes()), rank)
    }

    fn init(s: &mut PmiServer, rank: u32) {
        assert_eq!(
            ask(s, rank, "cmd=init pmi_version=1 pmi_subversion=1"),
            ["cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"]
        );
    }

    #[test]
    fn serves_a_whole_job() {
        let mut s = server(3);
        for r in 0..3 {
            init(&mut s, r);
            assert_eq!(s.state(r), Some(RankState::Initialized));
            assert_eq!(ask(&mut s, r, "cmd=get_maxes"), ["cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"]);
            assert_eq!(ask(&mut s, r, "cmd=get_appnum"), ["cmd=appnum appnum=0\n"]);
            assert_eq!(ask(&mut s, r, "cmd=get_my_kvsname"), ["cmd=my_kvsname kvsname=kvs_42_0\n"]);
            assert_eq!(ask(&mut s, r, "cmd=get_universe_size"), ["cmd=universe_size size=3\n"]);
            let put = format!("cmd=put kvsname=kvs_42_0 key=card-{r} value=host:{r}");
            assert_eq!(ask(&mut s, r, &put), ["cmd=put_result rc=0 msg=success\n"]);
        }
        // The barrier holds until the third rank enters, then releases everyone at once.
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        assert!(s.handle_line(2, b"cmd=barrier_in").is_empty());
        assert_eq!(s.handle_line(1, b"cmd=barrier_in"), [Action::ReplyAll { bytes: b"cmd=barrier_out\n".to_vec() }]);
        assert_eq!(ask(&mut s, 1, "cmd=get kvsname=kvs_42_0 key=card-2"), ["cmd=get_result rc=0 msg=success value=host:2\n"]);
        assert_eq!(ask(&mut s, 1, "cmd=get kvsname=kvs_42_0 key=nope"), ["cmd=get_result rc=-1 msg=key_nope_not_found\n"]);
        // A second barrier works the same way.
        assert!(s.handle_line(1, b"cmd=barrier_in").is_empty());
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        assert_eq!(s.handle_line(2, b"cmd=barrier_in").len(), 1);
        for r in 0..3 {
            let actions = s.handle_line(r, b"cmd=finalize");
            assert_eq!(replies_to(&actions, r), ["cmd=finalize_ack\n"]);
            assert!(actions.contains(&Action::Finalized { rank: r }));
            assert_eq!(s.state(r), Some(RankState::Finalized));
        }
    }

    #[test]
    fn hands_out_the_job_secret_and_process_mapping_but_protects_them() {
        let mut s = server(4);
        init(&mut s, 2);
        assert_eq!(ask(&mut s, 2, "cmd=get key=ferry-job-secret"), [format!("cmd=get_result rc=0 msg=success value={SECRET}\n")]);
        assert_eq!(
            ask(&mut s, 2, "cmd=get key=PMI_process_mapping"),
            ["cmd=get_result rc=0 msg=success value=(vector,(0,1,4))\n"]
        );
        let actions = s.handle_line(2, b"cmd=put key=ferry-job-secret value=00");
        assert_eq!(replies_to(&actions, 2), ["cmd=put_result rc=-1 msg=key_ferry-job-secret_is_reserved\n"]);
        assert!(matches!(actions[1], Action::Refused { rank: 2, .. }));
        assert_eq!(ask(&mut s, 2, "cmd=get key=ferry-job-secret"), [format!("cmd=get_result rc=0 msg=success value={SECRET}\n")]);
    }

    #[test]
    fn seeds_keys_the_ranks_cannot_overwrite() {
        let mut s = server(2);
        s.seed("PMI_process_mapping", "(vector,(0,2,1))").expect("valid");
        s.seed("ferry-proxies", "f1=1.2.3.4:5").expect("valid");
        assert!(s.seed("ferry-job-secret", "00").is_err());
        assert!(s.seed("bad key", "x").is_err());
        init(&mut s, 1);
        assert_eq!(ask(&mut s, 1, "cmd=get key=PMI_process_mapping"), ["cmd=get_result rc=0 msg=success value=(vector,(0,2,1))\n"]);
        let actions = s.handle_line(1, b"cmd=put key=ferry-proxies value=evil");
        assert_eq!(replies_to(&actions, 1), ["cmd=put_result rc=-1 msg=key_ferry-proxies_is_reserved\n"]);
        assert_eq!(s.value("ferry-proxies"), Some("f1=1.2.3.4:5"));
        assert_eq!(s.value("nope"), None);
    }

    #[test]
    fn validates_its_configuration() {
        assert!(PmiServer::new(0, "kvs", SECRET).is_err());
        assert!(PmiServer::new(1, "kvs 1", SECRET).is_err());
        assert!(PmiServer::new(1, "kvs", "abc").is_err());
        assert!(PmiServer::new(1, "kvs", &SECRET.to_uppercase()).is_err());
        assert!(PmiServer::new(1, &"k".repeat(256), SECRET).is_err());
        assert!(PmiServer::new(1, &"k".repeat(255), SECRET).is_ok());
    }

    #[test]
    fn answers_a_malformed_line_and_carries_on() {
        let mut s = server(2);
        init(&mut s, 0);
        // Garbage: no command name to answer under, so cmd=error.
        let actions = s.handle_line(0, b"garbage line");
        assert_eq!(replies_to(&actions, 0), ["cmd=error rc=-1 msg=PMI_line_does_not_start_with_\"cmd=\"\n"]);
        assert!(matches!(actions[1], Action::Refused { rank: 0, error: PmiError::MissingCmd }));
        let actions = s.handle_line(0, b"cmd=get_appnum \xff");
        assert!(replies_to(&actions, 0)[0].starts_with("cmd=appnum rc=-1 msg=PMI_line_contains_byte_0xff"));
        // A malformed put is answered as a put, so a waiting client gets the reply it expects.
        let actions = s.handle_line(0, b"cmd=put key=a");
        let reply = &replies_to(&actions, 0)[0];
        assert!(reply.starts_with("cmd=put_result rc=-1 msg="), "{reply}");
        assert!(matches!(Response::parse(reply.as_bytes()), Ok(Response::Failed { kind: ResponseKind::PutResult, .. })));
        // An unknown command.
        let actions = s.handle_line(0, b"cmd=frobnicate service=x port=y");
        assert!(replies_to(&actions, 0)[0].starts_with("cmd=error rc=-1 msg=unknown_PMI_command"));
        // Still serving.
        assert_eq!(ask(&mut s, 0, "cmd=get_appnum"), ["cmd=appnum appnum=0\n"]);
        assert_eq!(s.state(0), Some(RankState::Initialized));
    }

    #[test]
    fn receive_reassembles_lines_and_refuses_overlong_ones() {
        let mut s = server(1);
        assert!(s.receive(0, b"cmd=init pmi_vers").is_empty());
        let actions = s.receive(0, b"ion=1 pmi_subversion=1\ncmd=get_app");
        assert_eq!(replies_to(&actions, 0), ["cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"]);
        let actions = s.receive(0, b"num\n");
        assert_eq!(replies_to(&actions, 0), ["cmd=appnum appnum=0\n"]);
        let actions = s.receive(0, &vec![b'x'; 5000]);
        assert!(replies_to(&actions, 0)[0].starts_with("cmd=error rc=-1 msg=PMI_line_longer_than_4096"));
        let actions = s.receive(0, b"xx\ncmd=get_appnum\n");
        assert_eq!(replies_to(&actions, 0), ["cmd=appnum appnum=0\n"]);
    }

    #[test]
    fn hands_spawn_and_name_requests_to_the_driver() {
        use crate::bootstrap::{SpawnCommand, SpawnRequest};
        let mut s = server(2);
        init(&mut s, 0);
        s.set_universe_size(8);
        assert_eq!(ask(&mut s, 0, "cmd=get_universe_size"), ["cmd=universe_size size=8\n"]);
        let request = SpawnRequest {
            port: b"p".to_vec(),
            commands: vec![SpawnCommand { program: b"a".to_vec(), args: vec![], nprocs: 2, wdir: b"/".to_vec(), path: vec![] }],
        };
        let line = format!("cmd=ferry_spawn request={}", request.encode());
        assert_eq!(s.handle_line(0, line.as_bytes()), [Action::Spawn { rank: 0, request }]);
        let refused = replies_to(&s.handle_line(0, b"cmd=ferry_spawn request=zz"), 0);
        assert!(refused[0].starts_with("cmd=ferry_spawn_result rc=-1"), "{refused:?}");
        assert_eq!(
            s.handle_line(0, b"cmd=lookup_name service=svc"),
            [Action::Name { rank: 0, request: NameRequest::Lookup { service: "svc".into() } }]
        );
        let answer = s.answer(0, Response::LookupResult { port: "x".into() });
        assert_eq!(answer, Action::Reply { rank: 0, bytes: b"cmd=lookup_result rc=0 port=x\n".to_vec() });
    }

    #[test]
    fn enforces_the_protocol_order_and_limits() {
        let mut s = server(2);
        assert!(ask(&mut s, 0, "cmd=get_maxes")[0].starts_with("cmd=maxes rc=-1 msg=init_must_come_first"));
        assert!(ask(&mut s, 0, "cmd=init pmi_version=2 pmi_subversion=0")[0].starts_with("cmd=response_to_init rc=-1"));
        assert_eq!(s.state(0), Some(RankState::NotInitialized));
        init(&mut s, 0);
        init(&mut s, 0); // init twice is harmless
        let long_key = format!("cmd=put key={} value=v", "k".repeat(64));
        assert!(ask(&mut s, 0, &long_key)[0].starts_with("cmd=put_result rc=-1 msg=key_is_64_bytes;_the_limit_is_63"));
        let long_value = format!("cmd=put key=k value={}", "v".repeat(1024));
        assert!(ask(&mut s, 0, &long_value)[0].starts_with("cmd=put_result rc=-1 msg=value_is_1024_bytes;_the_limit_is_1023"));
        let just_fits = format!("cmd=put key={} value={}", "k".repeat(63), "v".repeat(1023));
        assert_eq!(ask(&mut s, 0, &just_fits), ["cmd=put_result rc=0 msg=success\n"]);
        assert!(ask(&mut s, 0, "cmd=put kvsname=other key=k value=v")[0].starts_with("cmd=put_result rc=-1"));
        assert!(ask(&mut s, 0, "cmd=get kvsname=other key=k")[0].starts_with("cmd=get_result rc=-1"));
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        assert!(ask(&mut s, 0, "cmd=barrier_in")[0].starts_with("cmd=barrier_out rc=-1"));
        s.handle_line(0, b"cmd=finalize");
        assert!(ask(&mut s, 0, "cmd=get_appnum")[0].starts_with("cmd=appnum rc=-1 msg=PMI_is_already_finalized"));
    }

    #[test]
    fn abort_is_honoured_in_any_state() {
        let mut s = server(2);
        assert_eq!(
            s.handle_line(1, b"cmd=abort exitcode=3 message=bad input"),
            [Action::Abort { rank: 1, code: 3, message: Some("bad input".into()) }]
        );
        assert_eq!(s.state(1), Some(RankState::Aborted));
        init(&mut s, 0);
        assert_eq!(s.handle_line(0, b"cmd=abort"), [Action::Abort { rank: 0, code: 1, message: None }]);
    }

    #[test]
    fn a_barrier_that_cannot_complete_is_reported_once() {
        let mut s = server(3);
        for r in 0..3 {
            init(&mut s, r);
        }
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        let actions = s.handle_line(1, b"cmd=finalize");
        assert!(actions.contains(&Action::BarrierBroken { gone: 1, waiting: vec![0] }));
        assert!(s.handle_line(2, b"cmd=barrier_in").is_empty());
        assert!(s.rank_gone(1).is_empty());

        // A rank that exits while another waits.
        let mut s = server(2);
        init(&mut s, 0);
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        assert_eq!(s.rank_gone(1), [Action::BarrierBroken { gone: 1, waiting: vec![0] }]);

        // A rank that enters after another has already finalized.
        let mut s = server(2);
        init(&mut s, 0);
        init(&mut s, 1);
        s.handle_line(1, b"cmd=finalize");
        assert_eq!(s.handle_line(0, b"cmd=barrier_in"), [Action::BarrierBroken { gone: 1, waiting: vec![0] }]);
    }

    #[test]
    fn with_recovery_a_dead_rank_no_longer_counts_in_the_barrier() {
        let mut s = server(3);
        s.set_recovery(true);
        for r in 0..3 {
            init(&mut s, r);
        }
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        assert!(s.rank_gone(1).is_empty(), "the others go on");
        let out = s.handle_line(2, b"cmd=barrier_in");
        assert!(matches!(out.as_slice(), [Action::ReplyAll { .. }]), "{out:?}");
        // Dying while the others wait releases them.
        let mut s = server(2);
        s.set_recovery(true);
        init(&mut s, 0);
        init(&mut s, 1);
        assert!(s.handle_line(0, b"cmd=barrier_in").is_empty());
        assert!(matches!(s.rank_gone(1).as_slice(), [Action::ReplyAll { .. }]));
    }

    #[test]
    fn leaving_without_a_barrier_is_not_an_error() {
        let mut s = server(2);
        init(&mut s, 0);
        assert!(s.rank_gone(0).is_empty());
        assert!(s.rank_gone(0).is_empty());
        assert!(s.receive(0, b"cmd=get_appnum\n").is_empty(), "a gone rank is not served");
        assert!(s.receive(7, b"cmd=get_appnum\n").is_empty());
        assert!(s.handle_command(7, Command::GetAppnum).is_empty());
    }

    fn any_line() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"cmd=init pmi_version=1 pmi_subversion=1".to_vec()),
            Just(b"cmd=get_maxes".to_vec()),
            Just(b"cmd=get_universe_size".to_vec()),
            Just(b"cmd=barrier_in".to_vec()),
            Just(b"cmd=finalize".to_vec()),
            Just(b"cmd=abort exitcode=2".to_vec()),
            "[a-c]{1,2}".prop_map(|k| format!("cmd=put key={k} value=v{k}").into_bytes()),
            "[a-c]{1,2}".prop_map(|k| format!("cmd=get key={k}").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest! {
        /// Whatever the ranks send, in whatever order: no panic, every request but abort and
        /// barrier_in gets exactly one well-formed reply of the kind it waits for, and the
        /// barrier releases exactly when every rank is in it.
        #[test]
        fn any_sequence_is_served(ops in proptest::collection::vec((0u32..3, any_line()), 0..60)) {
            let mut s = server(3);
            for (rank, line) in ops {
                let before = s.state(rank);
                let actions = s.handle_line(rank, &line);
                let parsed = Command::parse(&line);
                let replies: Vec<&Vec<u8>> = actions.iter().filter_map(|a| match a {
                    Action::Reply { rank: r, bytes } => Some((*r, bytes)),
                    _ => None,
                }).map(|(r, bytes)| { assert_eq!(r, rank); bytes }).collect();
                for bytes in &replies {
                    prop_assert!(Response::parse(bytes).is_ok());
                }
                match parsed {
                    Ok(Command::Abort { .. }) => prop_assert!(replies.is_empty()),
                    Ok(Command::BarrierIn) if before == Some(RankState::Initialized) => prop_assert!(replies.len() <= 1),
                    Ok(c) => {
                        prop_assert_eq!(replies.len(), 1);
                        let r = Response::parse(replies[0]).unwrap();
                        prop_assert_eq!(Some(r.kind()), c.response_kind());
                    }
                    Err(_) => prop_assert_eq!(replies.len(), 1),
                }
                if actions.iter().any(|a| matches!(a, Action::ReplyAll { .. })) {
                    prop_assert!((0..3).all(|r| s.state(r) == Some(RankState::Initialized)));
                }
            }
        }
    }
}
