//! Large-count collectives. The reductions go straight to `crate::coll`'s implementation,
//! which carries their `MPI_Count` to the schedules (a count of bytes there); the others go
//! onto their int-count twins (the `PMPI_` entry points of `exports::collectives`, declared
//! here as the C symbols they are). A count is narrowed only where this rank's call reads it (a
//! non-root's receive count in a gather is not read, and may be anything), and an array only
//! where it is read, with the length the call reads.
//!
//! In the blocking and non-blocking calls with a single count (bcast, gather, scatter,
//! allgather, alltoall, the neighbourhood ones, and gatherv's or scatterv's own count), a count
//! beyond INT_MAX goes as one element of a type made for the call (`Counted`): blocks stay
//! where they were, each a whole made type apart, and messages carry the same bytes. In the
//! persistent inits onto int-count twins such a count is MPI_ERR_COUNT. A call whose arguments fail here still counts as a call on
//! its communicator, as the int-count implementation counts every call before it checks
//! anything: the next collective on that communicator keeps matching its peers'.

use std::os::raw::{c_int, c_void};

use ferry_coll::Collective;

use super::{converted, convert, narrow, Counted};
use crate::boundary::call;
use crate::coll;
use crate::consts::*;
use crate::error::MpiResult;
use crate::objects::Runtime;

pub(super) fn in_place(p: *const c_void) -> bool {
    p as isize == -1
}

/// Which of the communicator's collective sequences a failed conversion counts in (see
/// `crate::objects::comm::CollSeq`): the blocking calls', the non-blocking calls', or none for
/// persistent inits (which count each start instead).
#[derive(Clone, Copy)]
pub(super) enum Seq {
    Blocking,
    Nonblocking,
    Init,
}

impl Seq {
    /// Count one call in its sequence; nothing for an init.
    fn count(self, c: &mut crate::objects::Comm) {
        match self {
            Seq::Blocking => drop(c.coll_seq.next(true)),
            Seq::Nonblocking => drop(c.coll_seq.next(false)),
            Seq::Init => {}
        }
    }
}

pub(super) fn coll_convert<T>(name: &'static str, comm: MPI_Comm, seq: Seq, f: impl FnOnce(&mut Runtime) -> MpiResult<T>) -> Result<T, c_int> {
    convert(name, comm, |rt| {
        let r = f(rt);
        if r.is_err() {
            if let Some(c) = rt.comms.get_mut(&comm) {
                seq.count(c);
            }
        }
        r
    })
}

/// A count this rank's call may not read: passed on as it is when it fits an int, else as 0.
fn unread(v: MPI_Count) -> c_int {
    c_int::try_from(v).unwrap_or(0)
}

pub(super) fn narrow_if(read: bool, v: MPI_Count, what: &str) -> MpiResult<c_int> {
    if read {
        narrow(v, what)
    } else {
        Ok(unread(v))
    }
}

/// A count as a call passes it on: an int, or one beyond INT_MAX for a made type.
#[derive(Clone, Copy)]
pub(super) enum Count {
    Int(c_int),
    Big(MPI_Count),
}

impl Count {
    /// `v` where the call reads it (`read`), big ones allowed where `big`.
    pub(super) fn of(read: bool, v: MPI_Count, what: &str, big: bool) -> MpiResult<Count> {
        if big && read && v > c_int::MAX as MPI_Count {
            return Ok(Count::Big(v));
        }
        narrow_if(read, v, what).map(Count::Int)
    }

    /// The (count, type) to pass on; making a type counts a failure in the sequence too.
    pub(super) fn counted(self, name: &'static str, comm: MPI_Comm, seq: Seq, buf: *const c_void, dt: MPI_Datatype) -> Result<Counted, c_int> {
        match self {
            Count::Int(n) => Ok(Counted::plain(n, dt)),
            Count::Big(v) => Counted::new(name, comm, buf, v, dt).inspect_err(|_| count_call(comm, seq)),
        }
    }
}

/// Count a call that failed before reaching the implementation (see the module's doc).
fn count_call(comm: MPI_Comm, seq: Seq) {
    let count = |rt: &mut Runtime| {
        if let Some(c) = rt.comms.get_mut(&comm) {
            seq.count(c);
        }
    };
    match crate::generalized::reentered() {
        // SAFETY: inside an event or generalized-request callback the runtime is the one the
        // running MPI call on this thread lent, untouched by it until the callback returns.
        Some(rt) => count(unsafe { &mut *rt }),
        None => {
            if let Some(mut rt) = crate::objects::threads::Locked::lock() {
                count(&mut rt);
            }
        }
    }
}

/// Who reads which count in a call with a send and a receive count.
#[derive(Clone, Copy)]
enum Roles {
    /// Gather: the receive count at the root only.
    Gather,
    /// Scatter: the send count at the root only.
    Scatter,
    /// Allgather, alltoall and the neighbourhood calls: both everywhere.
    All,
}

/// How many ranks the per-rank arrays cover, and whether this rank is `root` (MPI_ROOT names it too).
pub(super) fn size_and_root(rt: &Runtime, comm: MPI_Comm, root: c_int) -> MpiResult<(usize, bool)> {
    let c = rt.comm(comm)?;
    // On an intercommunicator the arrays have an entry per remote rank, and only the rank
    // that passes MPI_ROOT is the root.
    let is_root = if c.is_inter() { root == MPI_ROOT } else { root == MPI_ROOT || root == c.rank };
    Ok((c.peer_size() as usize, is_root))
}

/// (sendcount, recvcount) narrowed where read; beyond INT_MAX where `big`.
#[allow(clippy::too_many_arguments)]
fn two_counts(rt: &Runtime, comm: MPI_Comm, roles: Roles, root: c_int, sbuf: *const c_void, rbuf: *const c_void, s: MPI_Count, r: MPI_Count, big: bool) -> MpiResult<(Count, Count)> {
    let (_, is_root) = size_and_root(rt, comm, root)?;
    let (read_s, read_r) = match roles {
        Roles::Gather => (!(is_root && in_place(sbuf)), is_root),
        Roles::Scatter => (is_root, !(is_root && in_place(rbuf))),
        Roles::All => (!in_place(sbuf), true),
    };
    Ok((Count::of(read_s, s, "sendcount", big)?, Count::of(read_r, r, "recvcount", big)?))
}

// ----- one count -------------------------------------------------------------------------

crate::mpi_export! { MPI_Bcast_c, PMPI_Bcast_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    let n = converted!(coll_convert("MPI_Bcast_c", comm, Seq::Blocking, |_| Count::of(true, count, "count", true)));
    let c = converted!(n.counted("MPI_Bcast_c", comm, Seq::Blocking, buf, dt));
    PMPI_Bcast(buf, c.count, c.dt, root, comm)
}}
crate::mpi_export! { MPI_Ibcast_c, PMPI_Ibcast_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    let n = converted!(coll_convert("MPI_Ibcast_c", comm, Seq::Nonblocking, |_| Count::of(true, count, "count", true)));
    let c = converted!(n.counted("MPI_Ibcast_c", comm, Seq::Nonblocking, buf, dt));
    PMPI_Ibcast(buf, c.count, c.dt, root, comm, req)
}}
crate::mpi_export! { MPI_Bcast_init_c, PMPI_Bcast_init_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    let n = converted!(coll_convert("MPI_Bcast_init_c", comm, Seq::Init, |_| narrow(count, "count")));
    PMPI_Bcast_init(buf, n, dt, root, comm, info, req)
}}

/// The reductions with one count, onto the implementation itself, which carries an
/// `MPI_Count` throughout: the blocking, non-blocking and persistent forms of each.
macro_rules! reductions {
    ($($coll:ident: $mpi:ident, $pmpi:ident; $impi:ident, $ipmpi:ident; $init:ident, $pinit:ident; ($($root:ident)?);)*) => {$(
        crate::mpi_export! { $mpi, $pmpi, (sbuf: *const c_void, rbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op, $($root: c_int,)? comm: MPI_Comm) {
            call(stringify!($mpi), comm, |rt| coll::reduce(rt, Collective::$coll, sbuf, rbuf, count, dt, op, reductions!(@root $($root)?), comm, coll::BLOCKING))
        }}
        crate::mpi_export! { $impi, $ipmpi, (sbuf: *const c_void, rbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op, $($root: c_int,)? comm: MPI_Comm,
                req: *mut MPI_Request) {
            call(stringify!($impi), comm, |rt| { let req = coll::req_out(rt, comm, req)?; coll::reduce(rt, Collective::$coll, sbuf, rbuf, count, dt, op, reductions!(@root $($root)?), comm, req) })
        }}
        crate::mpi_export! { $init, $pinit, (sbuf: *const c_void, rbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op, $($root: c_int,)? comm: MPI_Comm,
                info: MPI_Info, req: *mut MPI_Request) {
            call(stringify!($init), comm, |rt| coll::reduce_init(rt, Collective::$coll, sbuf, rbuf, count, dt, op, reductions!(@init_root $($root)?), comm, info, req))
        }}
    )*};
    (@root $r:ident) => { $r };
    (@root) => { 0 };
    (@init_root $r:ident) => { Some($r) };
    (@init_root) => { None };
}

reductions! {
    Reduce: MPI_Reduce_c, PMPI_Reduce_c; MPI_Ireduce_c, PMPI_Ireduce_c; MPI_Reduce_init_c, PMPI_Reduce_init_c; (root);
    Allreduce: MPI_Allreduce_c, PMPI_Allreduce_c; MPI_Iallreduce_c, PMPI_Iallreduce_c; MPI_Allreduce_init_c, PMPI_Allreduce_init_c; ();
    Scan: MPI_Scan_c, PMPI_Scan_c; MPI_Iscan_c, PMPI_Iscan_c; MPI_Scan_init_c, PMPI_Scan_init_c; ();
    Exscan: MPI_Exscan_c, PMPI_Exscan_c; MPI_Iexscan_c, PMPI_Iexscan_c; MPI_Exscan_init_c, PMPI_Exscan_init_c; ();
    ReduceScatter: MPI_Reduce_scatter_block_c, PMPI_Reduce_scatter_block_c; MPI_Ireduce_scatter_block_c, PMPI_Ireduce_scatter_block_c;
        MPI_Reduce_scatter_block_init_c, PMPI_Reduce_scatter_block_init_c; ();
}

crate::mpi_export! { MPI_Reduce_local_c, PMPI_Reduce_local_c, (inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op) {
    call("MPI_Reduce_local_c", MPI_COMM_WORLD, move |rt| crate::op::reduce_local(rt, inbuf, inoutbuf, count, dt, op))
}}

// ----- a send and a receive count --------------------------------------------------------

/// (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, [root,] comm, [info,] [request]).
macro_rules! two_count_calls {
    ($($mpi:ident, $pmpi:ident => $base:ident, $roles:expr, $seq:expr, ($($pre:ident: $pty:ty),*), ($($post:ident: $qty:ty),*);)*) => {
        extern "C" {$(
            fn $base(sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
                     $($pre: $pty,)* comm: MPI_Comm $(, $post: $qty)*) -> c_int;
        )*}
        $(crate::mpi_export! { $mpi, $pmpi, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void, rcount: MPI_Count, rtype: MPI_Datatype,
                $($pre: $pty,)* comm: MPI_Comm $(, $post: $qty)*) {
            let root = two_count_calls!(@root $($pre)*);
            let big = !matches!($seq, Seq::Init);
            let (s, r) = converted!(coll_convert(stringify!($mpi), comm, $seq, |rt| two_counts(rt, comm, $roles, root, sbuf, rbuf, scount, rcount, big)));
            let s = converted!(s.counted(stringify!($mpi), comm, $seq, sbuf, stype));
            let r = converted!(r.counted(stringify!($mpi), comm, $seq, rbuf, rtype));
            $base(sbuf, s.count, s.dt, rbuf, r.count, r.dt, $($pre,)* comm $(, $post)*)
        }})*
    };
    (@root $r:ident) => { $r };
    (@root) => { MPI_PROC_NULL };
}

two_count_calls! {
    MPI_Gather_c, PMPI_Gather_c => PMPI_Gather, Roles::Gather, Seq::Blocking, (root: c_int), ();
    MPI_Igather_c, PMPI_Igather_c => PMPI_Igather, Roles::Gather, Seq::Nonblocking, (root: c_int), (req: *mut MPI_Request);
    MPI_Gather_init_c, PMPI_Gather_init_c => PMPI_Gather_init, Roles::Gather, Seq::Init, (root: c_int), (info: MPI_Info, req: *mut MPI_Request);
    MPI_Scatter_c, PMPI_Scatter_c => PMPI_Scatter, Roles::Scatter, Seq::Blocking, (root: c_int), ();
    MPI_Iscatter_c, PMPI_Iscatter_c => PMPI_Iscatter, Roles::Scatter, Seq::Nonblocking, (root: c_int), (req: *mut MPI_Request);
    MPI_Scatter_init_c, PMPI_Scatter_init_c => PMPI_Scatter_init, Roles::Scatter, Seq::Init, (root: c_int), (info: MPI_Info, req: *mut MPI_Request);
    MPI_Allgather_c, PMPI_Allgather_c => PMPI_Allgather, Roles::All, Seq::Blocking, (), ();
    MPI_Iallgather_c, PMPI_Iallgather_c => PMPI_Iallgather, Roles::All, Seq::Nonblocking, (), (req: *mut MPI_Request);
    MPI_Allgather_init_c, PMPI_Allgather_init_c => PMPI_Allgather_init, Roles::All, Seq::Init, (), (info: MPI_Info, req: *mut MPI_Request);
    MPI_Alltoall_c, PMPI_Alltoall_c => PMPI_Alltoall, Roles::All, Seq::Blocking, (), ();
    MPI_Ialltoall_c, PMPI_Ialltoall_c => PMPI_Ialltoall, Roles::All, Seq::Nonblocking, (), (req: *mut MPI_Request);
    MPI_Alltoall_init_c, PMPI_Alltoall_init_c => PMPI_Alltoall_init, Roles::All, Seq::Init, (), (info: MPI_Info, req: *mut MPI_Request);
    MPI_Neighbor_allgather_c, PMPI_Neighbor_allgather_c => PMPI_Neighbor_allgather, Roles::All, Seq::Blocking, (), ();
    MPI_Ineighbor_allgather_c, PMPI_Ineighbor_allgather_c => PMPI_Ineighbor_allgather, Roles::All, Seq::Nonblocking, (), (req: *mut MPI_Request);
    MPI_Neighbor_alltoall_c, PMPI_Neighbor_alltoall_c => PMPI_Neighbor_alltoall, Roles::All, Seq::Blocking, (), ();
    MPI_Ineighbor_alltoall_c, PMPI_Ineighbor_alltoall_c => PMPI_Ineighbor_alltoall, Roles::All, Seq::Nonblocking, (), (req: *mut MPI_Request);
    MPI_Neighbor_allgather_init_c, PMPI_Neighbor_allgather_init_c => PMPI_Neighbor_allgather_init, Roles::All, Seq::Init, (), (info: MPI_Info, req: *mut MPI_Request);
    MPI_Neighbor_alltoall_init_c, PMPI_Neighbor_alltoall_init_c => PMPI_Neighbor_alltoall_init, Roles::All, Seq::Init, (), (info: MPI_Info, req: *mut MPI_Request);
}

extern "C" {
    fn PMPI_Bcast(buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int;
    fn PMPI_Ibcast(buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int;
    fn PMPI_Bcast_init(buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int;
}
