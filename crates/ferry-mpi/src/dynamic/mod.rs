//! Dynamic processes, the part built: ports (`MPI_Open_port`/`MPI_Close_port`) and the
//! intercommunicators `MPI_Comm_accept`/`MPI_Comm_connect` make between two jobs. The roots
//! meet through the port (`ferry_core::Port`, docs/dynamic.md); each root tells its group
//! the meeting over the communicator's internal context; every member adds the other
//! job's processes to its engine (a bridge) and builds the intercommunicator, whose remote
//! group is their peer numbers and whose context id is the higher of the two sides'.
//! Spawn (`spawn`) is the same meeting on a port the parents' root opens and hands the
//! children through the launcher; names (`names`) are the launcher's table of ports;
//! `MPI_Comm_join` (`join`) trades port names over the caller's socket.

mod join;
mod names;
mod spawn;

pub(crate) use join::join;
pub(crate) use names::{lookup_name, publish_name, unpublish_name};
pub(crate) use spawn::{join_parents, spawn, SpawnArgs};

use std::sync::Arc;
use std::time::Duration;

use ferry_core::engine::matching::Pattern;
use ferry_core::{connect_port, Meeting, Side, SpawnRequest};

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::internal;
use crate::objects::{Comm, Runtime, CONTEXT_BLOCK};

/// The longest port name with its NUL (MPICH's value).
pub(crate) const MAX_PORT_NAME: usize = 256;
/// How long a connecting root waits for the accepting root to take it, and each root for
/// the other's messages once they talk.
const MEETING_TIMEOUT: Duration = Duration::from_secs(120);
/// Tag of a root's word to its group (on the communicator's internal context; the
/// collective sequence of a correct program keeps it apart from other internal traffic).
const TAG_MEETING: i32 = internal::TAG_INTERCOMM;
/// A root's word to its group: at most this many bytes (the cards of thousands of members).
const WORD_CAP: usize = 16 << 20;

/// `MPI_Open_port`: a fresh port on the address this process's engine advertises.
pub(crate) fn open_port(rt: &mut Runtime) -> MpiResult<String> {
    let port = ferry_core::Port::open(rt.engine.listen_addr().ip()).map_err(|e| MpiError::new(MPI_ERR_PORT, format!("cannot open a port: {e}")))?;
    let name = port.name();
    rt.ports.push(port);
    Ok(name)
}

/// `MPI_Close_port`: `name` must be a port this process opened.
pub(crate) fn close_port(rt: &mut Runtime, name: &str) -> MpiResult<()> {
    match rt.ports.iter().position(|p| p.name() == name.trim_end_matches('\0')) {
        Some(i) => {
            rt.ports.remove(i);
            Ok(())
        }
        None => err(MPI_ERR_PORT, format!("{name:?} is not a port this process opened")),
    }
}

/// What a root does at the meeting: accept on one of its ports, connect to a port name, or
/// have the launcher start children and accept them on a fresh port (the request is read
/// at the root only).
pub(crate) enum Role<'a> {
    Accept(&'a str),
    Connect(&'a str),
    Spawn(Option<&'a SpawnRequest>),
}

/// `MPI_Comm_accept` / `MPI_Comm_connect` over intracommunicator `comm`, with `role` read
/// at `root` only.
pub(crate) fn meet(rt: &mut Runtime, comm: i32, root: i32, role: Role) -> MpiResult<i32> {
    let c = rt.comm(comm)?;
    if c.is_inter() {
        return err(MPI_ERR_COMM, "accept and connect take an intracommunicator");
    }
    if root < 0 || root >= c.size() {
        return err(MPI_ERR_ROOT, format!("invalid root {root} (communicator size {})", c.size()));
    }
    let (lctx, group, me, errhandler) = (c.ctx + 1, c.group.clone(), c.rank as usize, c.errhandler);
    // The group's next free context id, the same at every member.
    let (local_ctx, _) = internal::agree_context_among(rt, lctx, &group, me, internal::TAG_ALLGATHER, &[])?;
    let root_w = group[root as usize];
    let failed_class = if matches!(role, Role::Spawn(_)) { MPI_ERR_SPAWN } else { MPI_ERR_PORT };
    let meeting = if me == root as usize {
        let met = root_meets(rt, &group, local_ctx, role);
        // The group learns the meeting, or that there is none (an empty word).
        let word = met.as_ref().map_or_else(|_| Vec::new(), Meeting::encode);
        let mut reqs = Vec::new();
        for (r, &w) in group.iter().enumerate() {
            if r != me {
                // SAFETY: `word` outlives the wait below.
                reqs.extend(unsafe { rt.engine.isend(w, lctx, TAG_MEETING, word.as_ptr(), word.len(), false) });
            }
        }
        internal::wait_all(rt, &reqs)?;
        met?
    } else {
        let mut buf = vec![0u8; WORD_CAP];
        // SAFETY: `buf` outlives the wait below.
        let r = unsafe { rt.engine.irecv(Pattern { ctx: lctx, src: Some(root_w), tag: Some(TAG_MEETING) }, buf.as_mut_ptr(), buf.len()) };
        let st = internal::wait_all(rt, &[r])?;
        if st[0].bytes == 0 {
            let what = if failed_class == MPI_ERR_SPAWN { "the root could not spawn the children" } else { "the root could not meet the other job" };
            return err(failed_class, what);
        }
        Meeting::decode(&buf[..st[0].bytes]).map_err(|e| MpiError::new(MPI_ERR_INTERN, format!("the root's word: {e}")))?
    };
    let ctx = local_ctx.max(meeting.remote.ctx);
    rt.next_context = rt.next_context.max(ctx + CONTEXT_BLOCK);
    let peers = rt.engine.add_bridge(meeting.spec()).map_err(|e| MpiError::new(MPI_ERR_INTERN, format!("cannot join the other job: {e}")))?;
    let mut new = Comm::new(ctx, group.to_vec(), rt.world_rank);
    new.set_remote(Some(Arc::new(peers.collect())));
    new.errhandler = errhandler;
    Ok(rt.add_comm(new))
}

/// At `MPI_Comm_disconnect` of `comm` (still in the table): leave each bridge its remote
/// group came through when no other communicator of this process reaches a peer of it.
/// Both jobs disconnect collectively, so both sides leave alike; one that keeps another
/// communicator over the bridge says its goodbye at `MPI_Finalize` instead, which ends the
/// other side's wait then.
pub(crate) fn leave_bridges(rt: &mut Runtime, comm: i32) -> MpiResult<()> {
    let Some(remote) = rt.comm(comm)?.remote().cloned() else { return Ok(()) };
    let mut ids: Vec<u32> = remote.iter().filter_map(|&p| rt.engine.bridge_of(p).map(|(id, _)| id)).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let Some(peers) = rt.engine.bridge_peers(id) else { continue };
        let in_use = rt.comms.iter().any(|(h, c)| h != comm && c.group.iter().chain(c.remote().map(|r| r.iter()).into_iter().flatten()).any(|p| peers.contains(p)));
        if !in_use {
            rt.engine.disconnect_bridge(id, peers).map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("leaving the other job: {e}")))?;
        }
    }
    Ok(())
}

/// The root's part: its group's side, then the meeting through the port.
fn root_meets(rt: &mut Runtime, group: &[u32], ctx: u32, role: Role) -> MpiResult<Meeting> {
    let Some(side) = Side::of(&rt.engine, group, ctx) else {
        return err(MPI_ERR_COMM, "a communicator with processes of another job cannot accept or connect yet");
    };
    match role {
        Role::Accept(name) => {
            let Some(port) = rt.ports.iter().find(|p| p.name() == name.trim_end_matches('\0')) else {
                return err(MPI_ERR_PORT, format!("{name:?} is not a port this process opened"));
            };
            port.accept(&side, MEETING_TIMEOUT).map_err(|e| MpiError::new(MPI_ERR_PORT, e.to_string()))
        }
        Role::Connect(name) => connect_port(name, &side, MEETING_TIMEOUT).map_err(|e| MpiError::new(MPI_ERR_PORT, e.to_string())),
        Role::Spawn(request) => {
            let Some(request) = request else { return err(MPI_ERR_INTERN, "the root holds no spawn request") };
            let port = ferry_core::Port::open(rt.engine.listen_addr().ip()).map_err(|e| MpiError::new(MPI_ERR_SPAWN, format!("cannot open a port for the children: {e}")))?;
            let mut request = request.clone();
            request.port = port.name().into_bytes();
            rt.job().spawn(&request).map_err(|why| MpiError::new(MPI_ERR_SPAWN, format!("the launcher started no children: {why}")))?;
            // The children are started; they come to the port from their MPI_Init.
            port.accept_while(&side, MEETING_TIMEOUT, Some(MEETING_TIMEOUT), &mut || rt.job().spawned_alive())
                .map_err(|e| MpiError::new(MPI_ERR_SPAWN, format!("the children did not connect: {e}")))
        }
    }
}
