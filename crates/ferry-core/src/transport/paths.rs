//! Which way a connection between two processes goes when a job spans clusters whose compute
//! nodes have private addresses (SEEDS.md S5), and the rank order that keeps the relay out of
//! the way. Pure: names in, decisions out; the launcher, the proxy and the relayed route use it.
//!
//! A node is public when its global id has front == host (a front node, or a host of a
//! cluster without a private network). Outgoing connections leave a private cluster through
//! its front node's NAT; incoming ones reach a private node only through the proxy on its
//! cluster's front node. Of two ranks, the higher one initiates the connection and the lower
//! one keeps it, so a ranking that puts public processes first lets every private process
//! reach every public one outward, through NAT alone.

use std::fmt;

use super::business_card::GlobalId;

/// A node is public when it is its own front node.
pub fn is_public(id: &GlobalId) -> bool {
    id.front == id.host
}

/// Both processes sit behind the same front node (or one of them is that front node).
pub fn same_cluster(a: &GlobalId, b: &GlobalId) -> bool {
    a.front == b.front
}

/// How a connection from one process reaches another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// Straight to the target's address: same cluster, or public to public.
    Direct,
    /// Straight to a public target, leaving the initiator's private cluster through the NAT
    /// of its front node `front`; the target sees that front node's address.
    ThroughNat { front: String },
    /// The target is private in another cluster: connect to the proxy on its front node
    /// `front`, name the target, and let the proxy open the second leg and relay.
    ThroughProxy { front: String },
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Direct => write!(f, "direct"),
            Path::ThroughNat { front } => write!(f, "through the NAT of {front}"),
            Path::ThroughProxy { front } => write!(f, "through the proxy on {front}"),
        }
    }
}

/// The path of a connection that `from` opens to `to` (S5): same front node -> direct; a
/// public target -> direct, through the initiator's NAT when the initiator is private; a
/// private target in another cluster -> through the proxy on the target's front node.
pub fn choose(from: &GlobalId, to: &GlobalId) -> Path {
    if same_cluster(from, to) {
        Path::Direct
    } else if is_public(to) {
        if is_public(from) {
            Path::Direct
        } else {
            Path::ThroughNat { front: from.front.clone() }
        }
    } else {
        Path::ThroughProxy { front: to.front.clone() }
    }
}

/// Of two ranks, the one that opens their connection: the higher one (the lower one keeps it).
pub fn initiator(a: usize, b: usize) -> usize {
    a.max(b)
}

/// The connection between two ranks of a job: who opens it, to whom, and which way it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    pub from: usize,
    pub to: usize,
    pub path: Path,
}

impl fmt::Display for Connection {
    /// One line of `ferry run --show-paths`, e.g. `3 -> 0: through the proxy on front2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}: {}", self.from, self.to, self.path)
    }
}

/// The connection between ranks `a` and `b` (in either order) of a job whose rank `r` has the
/// global id `ids[r]`. Panics if a rank is out of range or `a == b` (no connection to oneself).
pub fn connection(ids: &[GlobalId], a: usize, b: usize) -> Connection {
    assert!(a != b, "a rank does not connect to itself");
    let from = initiator(a, b);
    let to = a.min(b);
    Connection { from, to, path: choose(&ids[from], &ids[to]) }
}

/// Every connection of the job, one per pair of ranks, ordered by (lower rank, higher rank).
pub fn connections(ids: &[GlobalId]) -> Vec<Connection> {
    let n = ids.len();
    (0..n).flat_map(|lo| (lo + 1..n).map(move |hi| (lo, hi))).map(|(lo, hi)| connection(ids, lo, hi)).collect()
}

/// The pairs (lower rank, higher rank) whose connection needs a proxy under this ranking.
pub fn proxied_pairs(ids: &[GlobalId]) -> Vec<(usize, usize)> {
    connections(ids).into_iter().filter(|c| matches!(c.path, Path::ThroughProxy { .. })).map(|c| (c.to, c.from)).collect()
}

/// The text of `ferry run --show-paths`: one line per pair of ranks.
pub fn describe(ids: &[GlobalId]) -> String {
    connections(ids).iter().map(|c| format!("{c}\n")).collect()
}

/// The order `--rank-policy public-first` gives a job: public processes first, then private
/// ones, each group in its given order. `order[r]` is the index in `ids` of the process that
/// gets rank `r`, so private processes get the higher ranks and initiate outward through NAT.
pub fn rank_order_public_first(ids: &[GlobalId]) -> Vec<usize> {
    let public = (0..ids.len()).filter(|&i| is_public(&ids[i]));
    let private = (0..ids.len()).filter(|&i| !is_public(&ids[i]));
    public.chain(private).collect()
}

/// The ids in the order a ranking gives them: `ranked[r] = ids[order[r]]`.
pub fn apply_order(ids: &[GlobalId], order: &[usize]) -> Vec<GlobalId> {
    order.iter().map(|&i| ids[i].clone()).collect()
}

/// How one rank of a job reaches a peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Either side connects when it first needs the other, straight to its address: both
    /// are in one cluster, or both are public, so each can reach the other.
    OnDemand,
    /// This rank, the higher of the two, opens the connection along this path as soon as
    /// the job starts, since the peer may be unable to reach it.
    Open(Path),
    /// The peer opens the connection ([`Reach::Open`] on its side): this rank waits for it.
    Await,
}

/// How rank `me` reaches rank `peer` of a job whose ranks have the global ids `ids`. Between
/// a private process and one of another cluster the higher rank connects (S5); that is what
/// [`connection`] and [`describe`] report for every pair.
pub fn reach(ids: &[GlobalId], me: usize, peer: usize) -> Reach {
    let (a, b) = (&ids[me], &ids[peer]);
    if same_cluster(a, b) || (is_public(a) && is_public(b)) {
        Reach::OnDemand
    } else if initiator(me, peer) == me {
        Reach::Open(choose(a, b))
    } else {
        Reach::Await
    }
}

/// Which of the `n` proxies serving one front node relays the connection between ranks `a`
/// and `b`: the pairs of a job spread evenly over them.
pub fn pick_proxy(n: usize, a: usize, b: usize) -> usize {
    assert!(n > 0, "a relayed path has a proxy");
    (a + b) % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(front: &str, host: &str, pid: u32) -> GlobalId {
        GlobalId { front: front.into(), host: host.into(), pid }
    }

    fn via_proxy(front: &str) -> Path {
        Path::ThroughProxy { front: front.into() }
    }

    fn via_nat(front: &str) -> Path {
        Path::ThroughNat { front: front.into() }
    }

    #[test]
    fn public_means_own_front() {
        assert!(is_public(&id("front1", "front1", 1)));
        assert!(is_public(&id("pub1", "pub1", 1)));
        assert!(!is_public(&id("front1", "c1n1", 1)));
    }

    #[test]
    fn same_cluster_is_direct() {
        let (a, b) = (id("front1", "c1n1", 10), id("front1", "c1n2", 11));
        assert_eq!(choose(&a, &b), Path::Direct);
        assert_eq!(choose(&b, &a), Path::Direct);
        // Two processes on one private host, and a private host and its own front node.
        assert_eq!(choose(&a, &id("front1", "c1n1", 12)), Path::Direct);
        assert_eq!(choose(&a, &id("front1", "front1", 13)), Path::Direct);
        assert_eq!(choose(&id("front1", "front1", 13), &a), Path::Direct);
    }

    #[test]
    fn private_to_public_leaves_through_nat() {
        let a = id("front1", "c1n1", 10);
        assert_eq!(choose(&a, &id("pub1", "pub1", 20)), via_nat("front1"));
        // Another cluster's front node is public too.
        assert_eq!(choose(&a, &id("front2", "front2", 21)), via_nat("front1"));
    }

    #[test]
    fn public_to_private_of_another_cluster_needs_the_proxy() {
        let b = id("front2", "c2n1", 30);
        assert_eq!(choose(&id("pub1", "pub1", 20), &b), via_proxy("front2"));
        assert_eq!(choose(&id("front1", "front1", 20), &b), via_proxy("front2"));
    }

    #[test]
    fn private_to_private_across_clusters_needs_the_target_proxy() {
        let (a, b) = (id("front1", "c1n1", 10), id("front2", "c2n1", 30));
        assert_eq!(choose(&a, &b), via_proxy("front2"));
        assert_eq!(choose(&b, &a), via_proxy("front1"));
    }

    #[test]
    fn public_to_public_is_direct() {
        let (a, b) = (id("pub1", "pub1", 20), id("pub2", "pub2", 21));
        assert_eq!(choose(&a, &b), Path::Direct);
        assert_eq!(choose(&b, &a), Path::Direct);
    }

    #[test]
    fn higher_rank_initiates() {
        assert_eq!(initiator(0, 3), 3);
        assert_eq!(initiator(5, 2), 5);
        let ids = [id("pub1", "pub1", 1), id("front1", "c1n1", 2)];
        assert_eq!(connection(&ids, 0, 1), connection(&ids, 1, 0));
        assert_eq!(connection(&ids, 0, 1), Connection { from: 1, to: 0, path: via_nat("front1") });
    }

    /// Two private clusters and two public hosts, in an order that puts a private host first.
    fn mixed_job() -> Vec<GlobalId> {
        vec![
            id("front1", "c1n1", 100),
            id("pub1", "pub1", 200),
            id("front2", "c2n1", 300),
            id("front1", "c1n2", 101),
            id("pub2", "pub2", 201),
        ]
    }

    #[test]
    fn public_first_order_is_stable() {
        assert_eq!(rank_order_public_first(&mixed_job()), vec![1, 4, 0, 2, 3]);
        assert_eq!(rank_order_public_first(&[]), Vec::<usize>::new());
        let ranked = apply_order(&mixed_job(), &rank_order_public_first(&mixed_job()));
        assert_eq!(ranked.iter().map(|i| i.host.as_str()).collect::<Vec<_>>(), ["pub1", "pub2", "c1n1", "c2n1", "c1n2"]);
    }

    #[test]
    fn public_first_removes_proxy_between_private_and_public() {
        let ids = mixed_job();
        // As given, rank 0 is private: the public ranks 1 and 4 would have to reach it through
        // the proxy, and so would the other cluster's rank 2; rank 2 is private and reached from above.
        assert_eq!(proxied_pairs(&ids), vec![(0, 1), (0, 2), (0, 4), (2, 3), (2, 4), (3, 4)]);
        // Public first, only the two clusters' private hosts still need it.
        let ranked = apply_order(&ids, &rank_order_public_first(&ids));
        assert_eq!(proxied_pairs(&ranked), vec![(2, 3), (3, 4)]);
    }

    #[test]
    fn describes_one_line_per_pair() {
        let ids = [id("pub1", "pub1", 1), id("front1", "c1n1", 2), id("front2", "c2n1", 3), id("front2", "c2n2", 4)];
        assert_eq!(
            describe(&ids),
            "1 -> 0: through the NAT of front1\n\
             2 -> 0: through the NAT of front2\n\
             3 -> 0: through the NAT of front2\n\
             2 -> 1: through the proxy on front1\n\
             3 -> 1: through the proxy on front1\n\
             3 -> 2: direct\n"
        );
        assert_eq!(describe(&ids[..1]), "");
    }

    /// Ids from a few clusters, each with a front node and a few private hosts, plus public
    /// hosts: small name spaces so that collisions (same host, same cluster) are common.
    fn any_id() -> impl Strategy<Value = GlobalId> {
        prop_oneof![
            (0..3u8, 0..3u8, 0..4u32).prop_map(|(c, h, pid)| id(&format!("front{c}"), &format!("c{c}n{h}"), pid)),
            (0..3u8, 0..4u32).prop_map(|(c, pid)| id(&format!("front{c}"), &format!("front{c}"), pid)),
            (0..3u8, 0..4u32).prop_map(|(p, pid)| id(&format!("pub{p}"), &format!("pub{p}"), pid)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn proxy_only_for_a_private_target_elsewhere(from in any_id(), to in any_id()) {
            let p = choose(&from, &to);
            let needs_proxy = !is_public(&to) && !same_cluster(&from, &to);
            prop_assert_eq!(matches!(p, Path::ThroughProxy { .. }), needs_proxy);
            if let Path::ThroughProxy { front } = &p {
                prop_assert_eq!(front, &to.front);
            }
            // NAT is crossed exactly when a private process leaves its cluster for a public one.
            let leaves_by_nat = !is_public(&from) && is_public(&to) && !same_cluster(&from, &to);
            prop_assert_eq!(p == Path::ThroughNat { front: from.front.clone() }, leaves_by_nat);
        }

        #[test]
        fn public_first_lets_private_ranks_initiate(ids in proptest::collection::vec(any_id(), 0..12)) {
            let order = rank_order_public_first(&ids);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..ids.len()).collect::<Vec<_>>());
            let ranked = apply_order(&ids, &order);
            for c in connections(&ranked) {
                let (lo, hi) = (&ranked[c.to], &ranked[c.from]);
                prop_assert!(c.from > c.to);
                if is_public(lo) != is_public(hi) {
                    // The private one has the higher rank, so it opens the connection outward.
                    prop_assert!(!is_public(hi));
                    prop_assert!(!matches!(c.path, Path::ThroughProxy { .. }), "{} needs the proxy", c);
                }
            }
            // What is left for the proxy: private pairs of different clusters, nothing else.
            for (lo, hi) in proxied_pairs(&ranked) {
                prop_assert!(!is_public(&ranked[lo]) && !is_public(&ranked[hi]));
                prop_assert!(!same_cluster(&ranked[lo], &ranked[hi]));
            }
        }
    }

    #[test]
    fn reach_matches_the_connections_described() {
        // Two public hosts, c1 (two nodes behind f1) and c2 (one behind f2).
        let ids = vec![id("p1", "p1", 1), id("p2", "p2", 2), id("f1", "c1a", 3), id("f1", "c1b", 4), id("f2", "c2a", 5)];
        assert_eq!(reach(&ids, 0, 1), Reach::OnDemand);
        assert_eq!(reach(&ids, 2, 3), Reach::OnDemand);
        assert_eq!(reach(&ids, 2, 0), Reach::Open(via_nat("f1")));
        assert_eq!(reach(&ids, 0, 2), Reach::Await);
        assert_eq!(reach(&ids, 4, 3), Reach::Open(via_proxy("f1")));
        assert_eq!(reach(&ids, 3, 4), Reach::Await);
    }

    #[test]
    fn proxies_share_the_pairs() {
        let mut count = [0; 2];
        for (a, b) in [(4, 2), (4, 3), (5, 2), (5, 3)] {
            count[pick_proxy(2, a, b)] += 1;
            assert_eq!(pick_proxy(2, a, b), pick_proxy(2, b, a));
        }
        assert_eq!(count, [2, 2]);
        assert_eq!(pick_proxy(1, 7, 9), 0);
    }

    proptest! {
        #[test]
        fn every_pair_has_exactly_one_opener_on_the_described_path(
            hosts in proptest::collection::vec((0u8..4, 0u8..3), 2..9)
        ) {
            // front 0..2 private clusters; 3: a public host of its own.
            let ids: Vec<GlobalId> = hosts
                .iter()
                .enumerate()
                .map(|(i, &(f, h))| if f == 3 { id(&format!("p{h}"), &format!("p{h}"), i as u32) } else { id(&format!("f{f}"), &format!("c{f}{h}"), i as u32) })
                .collect();
            for a in 0..ids.len() {
                for b in 0..ids.len() {
                    if a == b {
                        continue;
                    }
                    match (reach(&ids, a, b), reach(&ids, b, a)) {
                        (Reach::OnDemand, Reach::OnDemand) => {
                            prop_assert_eq!(choose(&ids[a], &ids[b]), Path::Direct);
                            prop_assert_eq!(choose(&ids[b], &ids[a]), Path::Direct);
                        }
                        (Reach::Open(p), Reach::Await) => {
                            prop_assert!(a > b);
                            prop_assert_eq!(p, connection(&ids, a, b).path);
                        }
                        (Reach::Await, Reach::Open(_)) => prop_assert!(a < b),
                        other => prop_assert!(false, "{a}<->{b}: {other:?}"),
                    }
                }
            }
        }
    }
}
