//! Ferry's collective algorithms as pure schedules. An algorithm is a function from
//! [`Params`] to one rank's [`Schedule`]; executors (the in-memory one here, the engine, the
//! simulator) run schedules. [`select`] picks the algorithm for a call from the decision
//! table (`decisions.table`) or an override list. Nothing here touches sockets, threads or
//! clocks.
//!
//! Buffer conventions (byte ranges; `BufferId::Send` is absent when the call is in place):
//!
//! | collective | `Send` | `Recv` | in place |
//! |---|---|---|---|
//! | bcast | unused | the message, on every rank (root: source) | — |
//! | scatter | root: all blocks at `displs` | own block | root: its block stays in `Send`, no `Recv` |
//! | gather | own block | root: all blocks at `displs` | root: own block already in `Recv` |
//! | allgather | own block | all blocks at `displs` | own block already in `Recv` |
//! | reduce | input | root: result | root: input in `Recv`, result replaces it |
//! | allreduce, scan, exscan | input | result | input in `Recv`, result replaces it |
//! | reduce_scatter | input: all blocks at `displs` | own block of the result | input in `Recv`; result at offset 0 |
//! | alltoall(v) | p blocks: block j, for rank j, at `send_displs[j]` | p blocks: block i, from rank i, at `displs[i]` | block j of `Recv` holds the data for rank j and is replaced by the block from rank j |
//! | barrier | — | — | — |
//!
//! Reductions: `Op::Reduce` names byte ranges and an operand order; the executor applies the
//! call's operation. Exscan leaves rank 0's `Recv` untouched.
//!
//! The size metric, the same for every collective, is the per-rank block in bytes:
//! `Params::blocks[i]` is what rank `i` contributes (bcast: every entry is the message size).
//! Alltoall(v) is the exception: `blocks[i]` is what this rank receives from rank `i` and
//! `send_blocks[j]` what it sends to rank `j`; each rank knows only its own layout.

pub mod executor;
pub mod goal;
pub mod hier;
pub mod schedule;
pub mod select;
pub mod slots;
pub mod validate;

mod shape;

pub mod allgather;
pub mod allreduce;
pub mod alltoall;
pub mod barrier;
pub mod bcast;
pub mod exscan;
pub mod gather;
pub mod inter;
pub mod neighbor;
pub mod reduce;
pub mod reduce_scatter;
pub mod scan;
pub mod scatter;

#[cfg(test)]
mod conformance;

pub use schedule::{
    coalesce, span_len, Arrival, BufferId, Continuation, Node, Op, OpId, Operands, Range, ReduceId,
    Rounds, Schedule, Scratch,
};

/// The parameters an algorithm builds one rank's schedule from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub rank: usize,
    pub size: usize,
    /// Root of rooted collectives (ignored by the others).
    pub root: usize,
    /// Bytes of each rank's block, in rank order. Bcast: every entry is the message size.
    /// Alltoall(v): the receive side, bytes this rank receives from each rank.
    pub blocks: Vec<usize>,
    /// Byte offset of each block in the buffer that holds all of them (v-variants'
    /// displacements; packed for the plain collectives). Alltoall(v): offsets in `Recv`.
    pub displs: Vec<usize>,
    /// Alltoall(v) only: bytes this rank sends to each rank, in rank order. `None`: the
    /// same as `blocks` (plain alltoall). Ignored when the call is in place (MPI then uses
    /// the receive layout for both directions).
    pub send_blocks: Option<Vec<usize>>,
    /// Alltoall(v) only: offset in `Send` of the block for each rank. `None`: `displs`.
    pub send_displs: Option<Vec<usize>>,
    /// MPI_IN_PLACE (see the table in the crate doc for where the data then lies).
    pub in_place: bool,
    /// Bytes of one element (reductions split buffers on element boundaries only).
    pub elem_size: usize,
    /// Segment size in bytes for pipelined algorithms.
    pub segment_size: usize,
    /// Radix of k-ary algorithms (`allgather.k_bruck`).
    pub radix: usize,
    /// Status-based algorithms: every rank, free ones first, busy ones last (the order the
    /// root read from the status board or from arrival of "free" tokens). Only the root's
    /// value matters; `None` means rank order.
    pub free_first: Option<Vec<usize>>,
    /// A rooted v-call (gatherv, scatterv): non-roots know only their own block, so nobody
    /// may conclude from `blocks` that there is nothing to move; zero-byte messages go.
    pub vcall: bool,
    /// Which host each rank runs on (equal numbers: the same host), where the caller knows
    /// and the ranks span several hosts; the hierarchical algorithms (`hier`) need it and
    /// run their flat counterpart without it.
    pub hosts: Option<std::sync::Arc<Vec<u32>>>,
}

impl Params {
    /// Every rank contributes `block` bytes; blocks are packed in rank order.
    pub fn uniform(rank: usize, size: usize, root: usize, block: usize) -> Params {
        Params::varying(
            rank,
            size,
            root,
            vec![block; size],
            (0..size).map(|i| i * block).collect(),
        )
    }

    /// Per-rank block sizes and displacements (the v-variants).
    pub fn varying(
        rank: usize,
        size: usize,
        root: usize,
        blocks: Vec<usize>,
        displs: Vec<usize>,
    ) -> Params {
        assert_eq!(blocks.len(), size, "one block size per rank");
        assert_eq!(displs.len(), size, "one displacement per rank");
        Params {
            rank,
            size,
            root,
            blocks,
            displs,
            send_blocks: None,
            send_displs: None,
            in_place: false,
            elem_size: 1,
            segment_size: 8192,
            radix: 4,
            free_first: None,
            vcall: false,
            hosts: None,
        }
    }

    /// Alltoall: `block` bytes to and from every rank, packed in rank order on both sides.
    pub fn alltoall(rank: usize, size: usize, block: usize) -> Params {
        Params::uniform(rank, size, 0, block)
    }

    /// Alltoallv as this rank sees it: what it sends to each rank (bytes and offsets in
    /// `Send`) and what it receives from each rank (bytes and offsets in `Recv`).
    pub fn alltoallv(
        rank: usize,
        size: usize,
        send_blocks: Vec<usize>,
        send_displs: Vec<usize>,
        recv_blocks: Vec<usize>,
        recv_displs: Vec<usize>,
    ) -> Params {
        assert_eq!(send_blocks.len(), size, "one send block size per rank");
        assert_eq!(send_displs.len(), size, "one send displacement per rank");
        let mut q = Params::varying(rank, size, 0, recv_blocks, recv_displs);
        q.send_blocks = Some(send_blocks);
        q.send_displs = Some(send_displs);
        q
    }

    pub fn in_place(mut self, yes: bool) -> Params {
        self.in_place = yes;
        self
    }
    /// The host of each rank (see [`Params::hosts`]).
    pub fn hosts(mut self, hosts: Option<std::sync::Arc<Vec<u32>>>) -> Params {
        debug_assert!(hosts.as_ref().is_none_or(|h| h.len() == self.size));
        self.hosts = hosts;
        self
    }
    pub fn elem_size(mut self, bytes: usize) -> Params {
        self.elem_size = bytes.max(1);
        self
    }
    pub fn segment_size(mut self, bytes: usize) -> Params {
        self.segment_size = bytes.max(1);
        self
    }
    pub fn radix(mut self, k: usize) -> Params {
        self.radix = k;
        self
    }
    pub fn vcall(mut self, yes: bool) -> Params {
        self.vcall = yes;
        self
    }
    pub fn free_first(mut self, order: Vec<usize>) -> Params {
        self.free_first = Some(order);
        self
    }

    /// The same parameters seen from another rank.
    pub fn for_rank(&self, rank: usize) -> Params {
        Params {
            rank,
            ..self.clone()
        }
    }
    /// Length of the buffer that holds every block at its displacement.
    pub fn extent(&self) -> usize {
        self.blocks
            .iter()
            .zip(&self.displs)
            .map(|(b, d)| b + d)
            .max()
            .unwrap_or(0)
    }
    /// Alltoall(v): the blocks this rank sends, as (bytes, offsets); the receive layout when
    /// there is no separate send layout or the call is in place.
    pub fn sends(&self) -> (&[usize], &[usize]) {
        match (&self.send_blocks, &self.send_displs) {
            (Some(b), Some(d)) if !self.in_place => (b, d),
            (Some(b), None) if !self.in_place => (b, &self.displs),
            _ => (&self.blocks, &self.displs),
        }
    }
    /// Alltoall(v): length of the send buffer that holds every outgoing block.
    pub fn send_extent(&self) -> usize {
        let (b, d) = self.sends();
        b.iter().zip(d).map(|(b, d)| b + d).max().unwrap_or(0)
    }
    pub fn total(&self) -> usize {
        self.blocks.iter().sum()
    }
    pub fn is_uniform(&self) -> bool {
        self.blocks.windows(2).all(|w| w[0] == w[1])
    }
}

/// Cost of an algorithm as counts, free of any machine model (the simulator adds one), in
/// the textbook's single-port model (a rank sends one message and receives one per step):
/// `rounds` is the number of steps, `bytes` the bytes on the critical path (per step, the
/// largest message of that step; alpha-beta time is `rounds alpha + bytes beta`),
/// `messages` the total over all ranks, and `rank_bytes` what the busiest rank sends or
/// receives (the larger of the two). Tests check `messages` and `rank_bytes` against what
/// the executor counts, and `rounds`/`bytes` against its causal-chain lower bounds.
/// Alltoallv is the exception: a rank knows only its own layout, so `bytes` and
/// `rank_bytes` are what this rank sees, and the collective's are the maxima over ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    pub rounds: usize,
    pub messages: usize,
    pub bytes: usize,
    pub rank_bytes: usize,
}

impl Cost {
    pub const ZERO: Cost = Cost {
        rounds: 0,
        messages: 0,
        bytes: 0,
        rank_bytes: 0,
    };
}

/// The MPI collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    Bcast,
    Scatter,
    Gather,
    Allgather,
    Alltoall,
    Reduce,
    Allreduce,
    ReduceScatter,
    Scan,
    Exscan,
    Barrier,
}

impl Collective {
    /// Every collective, in the order of this enum.
    pub const ALL: [Collective; 11] = [
        Collective::Bcast,
        Collective::Scatter,
        Collective::Gather,
        Collective::Allgather,
        Collective::Alltoall,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::ReduceScatter,
        Collective::Scan,
        Collective::Exscan,
        Collective::Barrier,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Collective::Bcast => "bcast",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::Allgather => "allgather",
            Collective::Alltoall => "alltoall",
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Scan => "scan",
            Collective::Exscan => "exscan",
            Collective::Barrier => "barrier",
        }
    }
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Collective::Bcast | Collective::Scatter | Collective::Gather | Collective::Reduce
        )
    }
}

/// One algorithm, for `ferry info` and the selector.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmInfo {
    /// `<collective>.<algorithm>`, the name used everywhere (environment, tables, output).
    pub id: &'static str,
    pub collective: Collective,
    pub description: &'static str,
    /// When it applies, and what it does otherwise (every algorithm runs for every size).
    pub restrictions: &'static str,
    /// Accepts per-rank block sizes (the v-variant of its collective).
    pub varying: bool,
    /// Accepts MPI_IN_PLACE.
    pub in_place: bool,
    /// Reductions: keeps operand order, so non-commutative operations are correct.
    pub ordered: bool,
    /// `Some(limit)`: an algorithm over the shared memory of one host (`crate::slots`), for
    /// blocking calls whose ranks all run on one host, reductions with predefined operations,
    /// and size metrics up to `limit` bytes; `None`: a schedule of messages, for any call.
    pub shared: Option<usize>,
    /// A hierarchical algorithm (`crate::hier`): for calls whose ranks span several hosts
    /// with more than one on some.
    pub hier: bool,
    pub schedule: fn(&Params) -> Schedule,
    pub cost: fn(&Params) -> Cost,
}

macro_rules! algorithm {
    ($module:path, $coll:ident) => {
        algorithm!($module, $coll, false)
    };
    ($module:path, $coll:ident, $ordered:expr) => {
        algorithm!($module, $coll, $ordered, None)
    };
    ($module:path, $coll:ident, $ordered:expr, $shared:expr) => {
        algorithm!($module, $coll, $ordered, $shared, false)
    };
    ($module:path, $coll:ident, $ordered:expr, $shared:expr, $hier:expr) => {{
        use $module as m;
        AlgorithmInfo {
            id: m::ID,
            collective: Collective::$coll,
            description: m::DESCRIPTION,
            restrictions: m::RESTRICTIONS,
            varying: m::VARYING,
            in_place: m::IN_PLACE,
            ordered: $ordered,
            shared: $shared,
            hier: $hier,
            schedule: m::schedule,
            cost: m::cost,
        }
    }};
}

static ALGORITHMS: &[AlgorithmInfo] = &[
    algorithm!(bcast::binomial, Bcast),
    algorithm!(bcast::scatter_allgather, Bcast),
    algorithm!(bcast::pipelined_chain, Bcast),
    algorithm!(bcast::status_binomial, Bcast),
    algorithm!(bcast::shm, Bcast, false, Some(slots::SLOT_BYTES)),
    algorithm!(bcast::hier, Bcast, false, None, true),
    algorithm!(scatter::linear, Scatter),
    algorithm!(scatter::binomial, Scatter),
    algorithm!(scatter::status_linear, Scatter),
    algorithm!(scatter::shm, Scatter, false, Some(slots::SLOT_BYTES)),
    algorithm!(gather::linear, Gather),
    algorithm!(gather::binomial, Gather),
    algorithm!(gather::status_linear, Gather),
    algorithm!(gather::shm, Gather, false, Some(slots::SLOT_BYTES)),
    algorithm!(allgather::ring, Allgather),
    algorithm!(allgather::recursive_doubling, Allgather),
    algorithm!(allgather::bruck, Allgather),
    algorithm!(allgather::double_ring, Allgather),
    algorithm!(allgather::double_bruck, Allgather),
    algorithm!(allgather::k_bruck, Allgather),
    algorithm!(allgather::neighbor_exchange, Allgather),
    algorithm!(allgather::shm, Allgather, false, Some(slots::SLOT_BYTES)),
    algorithm!(alltoall::pairwise, Alltoall),
    algorithm!(alltoall::bruck, Alltoall),
    algorithm!(alltoall::linear, Alltoall),
    algorithm!(alltoall::shm, Alltoall, false, Some(slots::SLOT_BYTES)),
    algorithm!(reduce::binomial, Reduce, true),
    algorithm!(reduce::rabenseifner, Reduce),
    algorithm!(reduce::shm, Reduce, true, Some(slots::SLOT_BYTES)),
    algorithm!(allreduce::recursive_doubling, Allreduce, true),
    algorithm!(allreduce::ring, Allreduce),
    algorithm!(allreduce::rabenseifner, Allreduce),
    algorithm!(allreduce::shm, Allreduce, true, Some(slots::SLOT_BYTES)),
    algorithm!(allreduce::hier, Allreduce, false, None, true),
    algorithm!(reduce_scatter::pairwise, ReduceScatter),
    algorithm!(reduce_scatter::reduce_then_scatter, ReduceScatter, true),
    algorithm!(scan::recursive_doubling, Scan, true),
    algorithm!(exscan::recursive_doubling, Exscan, true),
    algorithm!(barrier::dissemination, Barrier),
    algorithm!(barrier::shm, Barrier, false, Some(slots::SLOT_BYTES)),
];

/// Every algorithm, grouped by collective.
pub fn algorithms() -> &'static [AlgorithmInfo] {
    ALGORITHMS
}

/// The algorithms of one collective, in registry order.
pub fn algorithms_for(collective: Collective) -> impl Iterator<Item = &'static AlgorithmInfo> {
    ALGORITHMS
        .iter()
        .filter(move |a| a.collective == collective)
}

/// The algorithm with this id.
pub fn algorithm(id: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_ids_are_unique_and_named_after_their_collective() {
        for (i, a) in algorithms().iter().enumerate() {
            let (coll, name) =
                a.id.split_once('.')
                    .expect("id is <collective>.<algorithm>");
            assert_eq!(coll, a.collective.name(), "{}", a.id);
            assert!(!name.is_empty() && !a.description.is_empty() && !a.restrictions.is_empty());
            assert!(
                algorithms()[..i].iter().all(|b| b.id != a.id),
                "{} twice",
                a.id
            );
        }
        assert!(algorithm("bcast.binomial").is_some());
        assert!(algorithm("bcast.nonsense").is_none());
        assert_eq!(algorithms_for(Collective::Allgather).count(), 8);
        assert_eq!(algorithms_for(Collective::Alltoall).count(), 4);
    }

    #[test]
    fn alltoallv_sends_use_the_receive_layout_in_place() {
        let q = Params::alltoallv(1, 2, vec![3, 4], vec![4, 0], vec![5, 6], vec![0, 5]);
        assert_eq!(q.sends(), (&[3, 4][..], &[4, 0][..]));
        assert_eq!((q.send_extent(), q.extent()), (7, 11));
        let q = q.in_place(true);
        assert_eq!(q.sends(), (&[5, 6][..], &[0, 5][..]));
        let q = Params::alltoall(0, 3, 8);
        assert_eq!(q.sends(), (&[8, 8, 8][..], &[0, 8, 16][..]));
    }
}
