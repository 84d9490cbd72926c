//! One collective call in the simulator: every rank's schedule built by the algorithm of
//! `ferry-coll`, the model evaluated at the communicator size (nLogP), background traffic
//! added, and for status-based algorithms the root's status read: it sees which nodes are
//! in a transfer when the call starts, orders them free-first, and starts its schedule
//! after the read's cost.

use crate::engine::{Outcome, Ports, Sim, SimError, Time, Transfer};
use ferry_coll::executor::{Buffers, Reduction};
use ferry_coll::{AlgorithmInfo, Collective, Params, ReduceId};
use ferry_model::ModelParams;

/// The call: which algorithm, on how many processes, with how many bytes per rank block
/// (ferry-coll's size metric; for bcast the message), from which root.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub algorithm: &'static AlgorithmInfo,
    pub procs: usize,
    pub bytes: usize,
    pub root: usize,
}

/// The machine and what else happens on it.
#[derive(Clone, Debug)]
pub struct Setup {
    pub model: ModelParams,
    /// What the root of a status-based algorithm pays to read the status of every node
    /// before it starts, microseconds.
    pub status_cost: Time,
    pub background: Vec<Transfer>,
    pub trace: bool,
    /// How ports order transfers (default: in the order they were matched).
    pub ports: Ports,
}

impl Setup {
    pub fn new(model: ModelParams) -> Setup {
        Setup {
            model,
            status_cost: 0.0,
            background: Vec::new(),
            trace: false,
            ports: Ports::InOrder,
        }
    }
}

/// Whether the algorithm reads node status (S1's status-based algorithms).
pub fn reads_status(info: &AlgorithmInfo) -> bool {
    info.id.contains(".status_")
}

/// Rank `rank`'s parameters for a uniform call of `bytes` per block.
pub fn params_for(info: &AlgorithmInfo, rank: usize, procs: usize, root: usize, bytes: usize) -> Params {
    match info.collective {
        Collective::Alltoall => Params::alltoall(rank, procs, bytes),
        Collective::Barrier => Params::uniform(rank, procs, root, 0),
        _ => Params::uniform(rank, procs, root, bytes),
    }
}

/// Free nodes first (in rank order), then busy ones: what the root derives from the board.
pub fn free_first(busy: &[bool]) -> Vec<usize> {
    let free = (0..busy.len()).filter(|&r| !busy[r]);
    free.chain((0..busy.len()).filter(|&r| busy[r])).collect()
}

fn ignore(_: ReduceId, _: &[u8], _: &mut [u8]) {}

/// Simulates one call. Status-based algorithms decide at run time, so their schedules run
/// with (zero-filled) data; the others move sizes only and are built one rank at a time.
pub fn simulate(call: &Call, setup: &Setup) -> Result<Outcome, SimError> {
    match run(call, setup, reads_status(call.algorithm)) {
        Err(SimError::NeedsData { .. }) => run(call, setup, true),
        other => other,
    }
}

fn run(call: &Call, setup: &Setup, with_data: bool) -> Result<Outcome, SimError> {
    let info = call.algorithm;
    let p = call.procs;
    let mut sim = Sim::new(p, setup.model.at(p)).trace(setup.trace).ports(setup.ports);
    sim.add_background(&setup.background)?;
    let mut starts = vec![0.0; p];
    let mut base = params_for(info, 0, p, call.root, call.bytes);
    if reads_status(info) {
        base = base.free_first(free_first(&sim.busy_at(0.0)));
        starts[call.root] = setup.status_cost;
    }
    if with_data {
        let schedules: Vec<_> = (0..p).map(|r| (info.schedule)(&base.for_rank(r))).collect();
        let bufs = schedules
            .iter()
            .map(|s| Buffers {
                send: vec![0; s.send_len()],
                recv: vec![0; s.recv_len()],
            })
            .collect();
        sim.load(schedules, &starts, Some((bufs, &ignore as &Reduction<'static>)))?;
    } else {
        let mut q = base;
        let schedules = (0..p).map(|r| {
            q.rank = r;
            (info.schedule)(&q)
        });
        sim.load(schedules, &starts, None)?;
    }
    sim.run()
}
