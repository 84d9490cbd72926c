//! The proxy's decisions, pure: which jobs are registered (and by which control connection),
//! where their members listen, and whether a relay request may open a second leg. Quotas
//! are counted here too, so the property tests can drive any sequence of events at it.

use core::net::SocketAddrV4;
use std::collections::HashMap;

use super::handshake::verify_request;
use super::policy::AddrPolicy;
use super::wire::{ControlRefusal, DenyReason, JobId, Request, KEY_LEN, NONCE_LEN};

/// The driver's name for a control connection (it owns at most one job).
pub type Owner = u64;

/// How much one job, one rank and the proxy as a whole may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub max_jobs: usize,
    /// The most ranks a job may declare.
    pub max_size: u32,
    /// Relayed connections open (or being opened) per job.
    pub job_connections: u32,
    /// Relayed connections per rank, counting those it asked for and those to it.
    pub rank_connections: u32,
}

impl Default for Quotas {
    fn default() -> Quotas {
        Quotas { max_jobs: 256, max_size: 1 << 20, job_connections: 4096, rank_connections: 256 }
    }
}

/// What a job's relayed pairs amounted to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobTotals {
    pub pairs: u64,
    pub bytes: u64,
}

#[derive(Debug)]
struct Job {
    owner: Owner,
    key: [u8; KEY_LEN],
    size: u32,
    members: HashMap<u32, SocketAddrV4>,
    open: u32,
    per_rank: HashMap<u32, u32>,
    totals: JobTotals,
}

impl Job {
    fn rank_open(&self, r: u32) -> u32 {
        self.per_rank.get(&r).copied().unwrap_or(0)
    }

    fn release(&mut self, from: u32, to: u32) {
        self.open = self.open.saturating_sub(1);
        for r in [from, to] {
            if let Some(n) = self.per_rank.get_mut(&r) {
                *n -= 1;
                if *n == 0 {
                    self.per_rank.remove(&r);
                }
            }
        }
    }
}

/// What to do with a verified-or-not relay request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Open the second leg to `target`; the connection counts against the quotas until
    /// [`Registry::pair_closed`] or [`Registry::pair_failed`].
    Allow { target: SocketAddrV4 },
    Deny(DenyReason),
}

/// Jobs and members known to the proxy.
#[derive(Debug)]
pub struct Registry {
    policy: AddrPolicy,
    quotas: Quotas,
    jobs: HashMap<JobId, Job>,
}

impl Registry {
    pub fn new(policy: AddrPolicy, quotas: Quotas) -> Registry {
        Registry { policy, quotas, jobs: HashMap::new() }
    }

    pub fn policy(&self) -> &AddrPolicy {
        &self.policy
    }

    pub fn quotas(&self) -> Quotas {
        self.quotas
    }

    /// The job that control connection `owner` registered.
    pub fn job_of(&self, owner: Owner) -> Option<JobId> {
        self.jobs.iter().find(|(_, j)| j.owner == owner).map(|(id, _)| *id)
    }

    pub fn register_job(&mut self, owner: Owner, job: JobId, key: [u8; KEY_LEN], size: u32) -> Result<(), ControlRefusal> {
        if self.job_of(owner).is_some() {
            return Err(ControlRefusal::AlreadyRegistered);
        }
        if self.jobs.contains_key(&job) {
            return Err(ControlRefusal::JobExists);
        }
        if size == 0 || size > self.quotas.max_size {
            return Err(ControlRefusal::BadSize);
        }
        if self.jobs.len() >= self.quotas.max_jobs {
            return Err(ControlRefusal::TooManyJobs);
        }
        self.jobs.insert(job, Job { owner, key, size, members: HashMap::new(), open: 0, per_rank: HashMap::new(), totals: JobTotals::default() });
        Ok(())
    }

    pub fn add_member(&mut self, owner: Owner, job: JobId, rank: u32, addr: SocketAddrV4) -> Result<(), ControlRefusal> {
        let Some(j) = self.jobs.get_mut(&job) else {
            return Err(if self.jobs.values().any(|j| j.owner == owner) { ControlRefusal::NotYourJob } else { ControlRefusal::NoJob });
        };
        if j.owner != owner {
            return Err(ControlRefusal::NotYourJob);
        }
        if rank >= j.size {
            return Err(ControlRefusal::BadRank);
        }
        if j.members.contains_key(&rank) {
            return Err(ControlRefusal::DuplicateRank);
        }
        if self.policy.check(addr).is_err() {
            return Err(ControlRefusal::AddressNotAllowed);
        }
        j.members.insert(rank, addr);
        Ok(())
    }

    /// The request's fate, on the connection greeted with `proxy_nonce`. The target address
    /// is checked against the policy again: it is the address about to be connected to.
    pub fn decide(&mut self, req: &Request, proxy_nonce: &[u8; NONCE_LEN]) -> Decision {
        let Some(j) = self.jobs.get_mut(&req.job) else { return Decision::Deny(DenyReason::UnknownJob) };
        if !verify_request(&j.key, req, proxy_nonce) {
            return Decision::Deny(DenyReason::BadProof);
        }
        if req.from >= j.size || req.from == req.to {
            return Decision::Deny(DenyReason::NotAMember);
        }
        let Some(&target) = j.members.get(&req.to) else { return Decision::Deny(DenyReason::TargetNotRegistered) };
        if self.policy.check(target).is_err() {
            return Decision::Deny(DenyReason::AddressNotAllowed);
        }
        if j.open >= self.quotas.job_connections {
            return Decision::Deny(DenyReason::JobQuota);
        }
        if j.rank_open(req.from) >= self.quotas.rank_connections || j.rank_open(req.to) >= self.quotas.rank_connections {
            return Decision::Deny(DenyReason::RankQuota);
        }
        j.open += 1;
        *j.per_rank.entry(req.from).or_default() += 1;
        *j.per_rank.entry(req.to).or_default() += 1;
        Decision::Allow { target }
    }

    /// An allowed second leg could not be opened: free its quota, count nothing.
    pub fn pair_failed(&mut self, job: &JobId, from: u32, to: u32) {
        if let Some(j) = self.jobs.get_mut(job) {
            j.release(from, to);
        }
    }

    /// A relayed pair closed after relaying `bytes` (both ways together).
    pub fn pair_closed(&mut self, job: &JobId, from: u32, to: u32, bytes: u64) {
        if let Some(j) = self.jobs.get_mut(job) {
            j.release(from, to);
            j.totals.pairs += 1;
            j.totals.bytes += bytes;
        }
    }

    /// The control connection `owner` closed: its job ends. The caller has closed the job's
    /// pairs first (reporting each to [`pair_closed`](Self::pair_closed)).
    pub fn end_job(&mut self, owner: Owner) -> Option<(JobId, JobTotals)> {
        let id = self.job_of(owner)?;
        let j = self.jobs.remove(&id).expect("found by job_of");
        Some((id, j.totals))
    }

    /// Relayed connections open for `job` (and for its `rank`).
    pub fn open_connections(&self, job: &JobId, rank: Option<u32>) -> u32 {
        self.jobs.get(job).map_or(0, |j| rank.map_or(j.open, |r| j.rank_open(r)))
    }

    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::relay::handshake::{relay_key, RelayAcceptor, RelayClient, ClientStep, AcceptStep};
    use crate::transport::relay::policy::Cidr;
    use proptest::prelude::*;

    const J1: JobId = [1; 16];
    const J2: JobId = [2; 16];
    const PN: [u8; 32] = [9; 32];

    fn policy() -> AddrPolicy {
        AddrPolicy::new(vec![Cidr::parse("10.1.0.0/16").unwrap()], vec!["10.1.0.1".parse().unwrap()])
    }

    fn key(job: &JobId) -> [u8; 32] {
        relay_key(job)
    }

    /// A request as a real client builds it, on a connection greeted with `PN`.
    fn req(job: JobId, signer: JobId, from: u32, to: u32) -> Request {
        let mut c = RelayClient::new(job, key(&signer), from, to, [from as u8; 32]);
        let (mut acc, _) = RelayAcceptor::new(PN);
        let ClientStep::Send(b) = c.on_bytes(&crate::transport::relay::wire::Msg::Hello { nonce: PN }.encode()).unwrap() else { panic!() };
        let AcceptStep::Relay { request, .. } = acc.on_bytes(&b).unwrap() else { panic!() };
        request
    }

    fn reg(q: Quotas) -> Registry {
        let mut r = Registry::new(policy(), q);
        r.register_job(1, J1, key(&J1), 4).unwrap();
        for rank in 0..3 {
            r.add_member(1, J1, rank, SocketAddrV4::new([10, 1, 0, 10 + rank as u8].into(), 4000)).unwrap();
        }
        r
    }

    #[test]
    fn a_member_reaches_a_registered_member() {
        let mut r = reg(Quotas::default());
        assert_eq!(r.decide(&req(J1, J1, 3, 1), &PN), Decision::Allow { target: "10.1.0.11:4000".parse().unwrap() });
        assert_eq!(r.open_connections(&J1, None), 1);
        assert_eq!(r.open_connections(&J1, Some(3)), 1);
        r.pair_closed(&J1, 3, 1, 100);
        assert_eq!(r.open_connections(&J1, None), 0);
        assert_eq!(r.end_job(1), Some((J1, JobTotals { pairs: 1, bytes: 100 })));
        assert_eq!(r.job_count(), 0);
    }

    #[test]
    fn denials_name_their_reason() {
        let mut r = reg(Quotas::default());
        assert_eq!(r.decide(&req(J2, J2, 0, 1), &PN), Decision::Deny(DenyReason::UnknownJob));
        // A member of another job signs with its own key.
        assert_eq!(r.decide(&req(J1, J2, 0, 1), &PN), Decision::Deny(DenyReason::BadProof));
        // Replayed: the same request on a connection with another nonce.
        assert_eq!(r.decide(&req(J1, J1, 0, 1), &[8; 32]), Decision::Deny(DenyReason::BadProof));
        assert_eq!(r.decide(&req(J1, J1, 4, 1), &PN), Decision::Deny(DenyReason::NotAMember));
        assert_eq!(r.decide(&req(J1, J1, 1, 1), &PN), Decision::Deny(DenyReason::NotAMember));
        assert_eq!(r.decide(&req(J1, J1, 0, 3), &PN), Decision::Deny(DenyReason::TargetNotRegistered));
        assert_eq!(r.open_connections(&J1, None), 0);
    }

    #[test]
    fn control_commands_are_checked() {
        let mut r = reg(Quotas { max_jobs: 2, ..Quotas::default() });
        let a = |s: &str| s.parse::<SocketAddrV4>().unwrap();
        assert_eq!(r.register_job(1, J2, key(&J2), 2), Err(ControlRefusal::AlreadyRegistered));
        assert_eq!(r.register_job(2, J1, key(&J1), 2), Err(ControlRefusal::JobExists));
        assert_eq!(r.register_job(2, J2, key(&J2), 0), Err(ControlRefusal::BadSize));
        assert_eq!(r.add_member(2, [9; 16], 3, a("10.1.0.13:1")), Err(ControlRefusal::NoJob));
        assert_eq!(r.add_member(2, J1, 3, a("10.1.0.13:1")), Err(ControlRefusal::NotYourJob));
        r.register_job(2, J2, key(&J2), 2).unwrap();
        assert_eq!(r.register_job(3, [3; 16], key(&J2), 2), Err(ControlRefusal::TooManyJobs));
        assert_eq!(r.add_member(2, J1, 3, a("10.1.0.13:1")), Err(ControlRefusal::NotYourJob));
        assert_eq!(r.add_member(1, J1, 4, a("10.1.0.14:1")), Err(ControlRefusal::BadRank));
        assert_eq!(r.add_member(1, J1, 0, a("10.1.0.14:1")), Err(ControlRefusal::DuplicateRank));
        for bad in ["127.0.0.1:1", "10.1.0.1:5", "10.9.0.1:5", "169.254.1.1:5"] {
            assert_eq!(r.add_member(1, J1, 3, a(bad)), Err(ControlRefusal::AddressNotAllowed), "{bad}");
        }
    }

    #[test]
    fn quotas_hold_and_free() {
        let mut r = reg(Quotas { job_connections: 3, rank_connections: 2, ..Quotas::default() });
        assert!(matches!(r.decide(&req(J1, J1, 3, 0), &PN), Decision::Allow { .. }));
        assert!(matches!(r.decide(&req(J1, J1, 3, 1), &PN), Decision::Allow { .. }));
        assert_eq!(r.decide(&req(J1, J1, 3, 2), &PN), Decision::Deny(DenyReason::RankQuota));
        assert!(matches!(r.decide(&req(J1, J1, 2, 1), &PN), Decision::Allow { .. }));
        assert_eq!(r.decide(&req(J1, J1, 0, 2), &PN), Decision::Deny(DenyReason::JobQuota));
        r.pair_failed(&J1, 3, 0);
        assert!(matches!(r.decide(&req(J1, J1, 0, 2), &PN), Decision::Allow { .. }));
        r.end_job(1);
        // A pair that closes after its job ended changes nothing.
        r.pair_closed(&J1, 3, 1, 5);
        assert_eq!(r.decide(&req(J1, J1, 3, 2), &PN), Decision::Deny(DenyReason::UnknownJob));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Register { owner: u8, job: u8, size: u8 },
        Add { owner: u8, job: u8, rank: u8, ip: [u8; 4] },
        Ask { job: u8, signer: u8, from: u8, to: u8, nonce_ok: bool },
        Close { pick: u8, failed: bool },
        End { owner: u8 },
    }

    fn op() -> impl Strategy<Value = Op> {
        let ip = prop_oneof![Just([10, 1, 0, 5]), Just([10, 1, 0, 1]), Just([127, 0, 0, 1]), Just([10, 2, 0, 5]), any::<[u8; 4]>()];
        prop_oneof![
            (0u8..3, 0u8..3, 0u8..6).prop_map(|(owner, job, size)| Op::Register { owner, job, size }),
            (0u8..3, 0u8..3, 0u8..6, ip).prop_map(|(owner, job, rank, ip)| Op::Add { owner, job, rank, ip }),
            (0u8..3, 0u8..3, 0u8..6, 0u8..6, any::<bool>()).prop_map(|(job, signer, from, to, nonce_ok)| Op::Ask { job, signer, from, to, nonce_ok }),
            (any::<u8>(), any::<bool>()).prop_map(|(pick, failed)| Op::Close { pick, failed }),
            (0u8..3).prop_map(|owner| Op::End { owner }),
        ]
    }

    proptest! {
        /// No sequence of events yields Allow for a request not signed with its job's key on
        /// this connection, for an unregistered (job, rank), or for a forbidden address; and
        /// the quotas are never exceeded.
        #[test]
        fn allow_only_what_the_rules_allow(ops in proptest::collection::vec(op(), 1..80)) {
            let q = Quotas { job_connections: 4, rank_connections: 2, max_jobs: 2, max_size: 5 };
            let mut r = Registry::new(policy(), q);
            // The model: registered members per job, as the registry accepted them.
            let mut members: HashMap<JobId, (u32, HashMap<u32, SocketAddrV4>)> = HashMap::new();
            let mut open: Vec<(JobId, u32, u32)> = Vec::new();
            let jid = |j: u8| [j + 1; 16];
            for op in ops {
                match op {
                    Op::Register { owner, job, size } => {
                        if r.register_job(owner as u64, jid(job), key(&jid(job)), size as u32).is_ok() {
                            members.insert(jid(job), (size as u32, HashMap::new()));
                        }
                    }
                    Op::Add { owner, job, rank, ip } => {
                        let addr = SocketAddrV4::new(ip.into(), 4000);
                        if r.add_member(owner as u64, jid(job), rank as u32, addr).is_ok() {
                            prop_assert!(r.policy().check(addr).is_ok());
                            members.get_mut(&jid(job)).expect("added to a registered job").1.insert(rank as u32, addr);
                        }
                    }
                    Op::Ask { job, signer, from, to, nonce_ok } => {
                        let request = req(jid(job), jid(signer), from as u32, to as u32);
                        let pn = if nonce_ok { PN } else { [0; 32] };
                        if let Decision::Allow { target } = r.decide(&request, &pn) {
                            prop_assert!(nonce_ok && job == signer);
                            let (size, m) = &members[&jid(job)];
                            prop_assert!((from as u32) < *size && from != to);
                            prop_assert_eq!(m.get(&(to as u32)), Some(&target));
                            prop_assert!(r.policy().check(target).is_ok());
                            open.push((jid(job), from as u32, to as u32));
                        }
                    }
                    Op::Close { pick, failed } => {
                        if !open.is_empty() {
                            let (j, f, t) = open.remove(pick as usize % open.len());
                            if failed { r.pair_failed(&j, f, t) } else { r.pair_closed(&j, f, t, 1) }
                        }
                    }
                    Op::End { owner } => {
                        if let Some((j, _)) = r.end_job(owner as u64) {
                            members.remove(&j);
                            open.retain(|(oj, _, _)| *oj != j);
                        }
                    }
                }
                for (j, _) in members.iter() {
                    let n = open.iter().filter(|(oj, _, _)| oj == j).count() as u32;
                    prop_assert_eq!(r.open_connections(j, None), n);
                    prop_assert!(n <= q.job_connections);
                    for rank in 0..6 {
                        let rn = r.open_connections(j, Some(rank));
                        prop_assert!(rn <= q.rank_connections);
                    }
                }
            }
        }
    }
}
