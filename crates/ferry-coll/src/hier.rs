//! The ranks of a call grouped by host, for the hierarchical algorithms
//! (`<collective>/hier.rs`): one leader per host, which alone talks to the other hosts, and
//! its host's other ranks, which talk only to it. Messages between ranks of one host cross
//! shared memory; between leaders, the network. A collective over h hosts then sends h - 1
//! (or a few times h) messages across the network instead of about p.

use crate::Params;

/// How the ranks of one call sit on hosts, seen from one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    /// One rank per host: its leader, the lowest rank there, except that `first` leads its
    /// own host; in the order of the hosts' lowest ranks, `first`'s host first.
    pub leaders: Vec<usize>,
    /// The ranks of this rank's host other than its leader, ascending.
    pub followers: Vec<usize>,
    /// The leader of this rank's host.
    pub leader: usize,
    /// The most ranks on one host.
    pub widest: usize,
}

impl Hosts {
    /// The grouping of `q`'s ranks with rank `first` leading its host (a broadcast's root;
    /// 0 otherwise), or `None` where there is nothing to gain: hosts unknown, one host, or
    /// one rank on every host.
    pub fn of(q: &Params, first: usize) -> Option<Hosts> {
        let hosts = q.hosts.as_deref()?;
        let p = q.size;
        if hosts.len() != p || p < 3 {
            return None;
        }
        // The distinct hosts in the order of their lowest ranks, `first`'s moved to the front.
        let mut order: Vec<u32> = Vec::new();
        for &h in hosts {
            if !order.contains(&h) {
                order.push(h);
            }
        }
        if order.len() < 2 || order.len() == p {
            return None;
        }
        let home = hosts[first];
        order.retain(|&h| h != home);
        order.insert(0, home);
        let lead = |h: u32| if h == home { first } else { (0..p).find(|&r| hosts[r] == h).expect("a host of the list has a rank") };
        let leaders: Vec<usize> = order.iter().map(|&h| lead(h)).collect();
        let mine = hosts[q.rank];
        let leader = lead(mine);
        let followers = (0..p).filter(|&r| hosts[r] == mine && r != leader).collect();
        let widest = order.iter().map(|&h| hosts.iter().filter(|&&x| x == h).count()).max().unwrap_or(1);
        Some(Hosts { leaders, followers, leader, widest })
    }

    /// This rank's index among the leaders, if it leads its host.
    pub fn leader_index(&self, rank: usize) -> Option<usize> {
        (self.leader == rank).then(|| self.leaders.iter().position(|&l| l == rank).expect("a leader is listed"))
    }

    /// The number of ranks of the host whose leader is `leader` (for costs).
    pub fn members(q: &Params, leader: usize) -> usize {
        let hosts = q.hosts.as_deref().expect("hosts are known");
        hosts.iter().filter(|&&h| h == hosts[leader]).count()
    }
}

#[cfg(test)]
mod tests {
    use super::Hosts;
    use crate::Params;
    use std::sync::Arc;

    fn q(rank: usize, hosts: &[u32]) -> Params {
        Params::uniform(rank, hosts.len(), 0, 8).hosts(Some(Arc::new(hosts.to_vec())))
    }

    #[test]
    fn leaders_are_the_lowest_ranks_but_the_first_leads_its_host() {
        let h = [5, 5, 9, 9, 5, 7];
        let g = Hosts::of(&q(4, &h), 0).unwrap();
        assert_eq!((g.leaders.as_slice(), g.followers.as_slice(), g.leader, g.widest), (&[0, 2, 5][..], &[1, 4][..], 0, 3));
        let g = Hosts::of(&q(4, &h), 3).unwrap();
        assert_eq!((g.leaders.as_slice(), g.followers.as_slice(), g.leader), (&[3, 0, 5][..], &[1, 4][..], 0));
        let g = Hosts::of(&q(3, &h), 3).unwrap();
        assert_eq!((g.leader_index(3), g.followers.as_slice()), (Some(0), &[2][..]));
    }

    #[test]
    fn nothing_to_gain_without_hosts_on_one_host_or_one_rank_per_host() {
        assert_eq!(Hosts::of(&Params::uniform(0, 4, 0, 8), 0), None);
        assert_eq!(Hosts::of(&q(0, &[1, 1, 1, 1]), 0), None);
        assert_eq!(Hosts::of(&q(0, &[1, 2, 3, 4]), 0), None);
        assert!(Hosts::of(&q(0, &[1, 2, 2]), 0).is_some());
    }
}
