//! Process topologies (MPI-4.1 chapter 8): Cartesian, graph and distributed graph
//! topologies, their queries, and the neighborhood collectives.

use std::os::raw::{c_int, c_void};

use crate::abi_objects::is_unweighted;
use crate::boundary::call;
use crate::coll::{BLOCKING, Counts, Displs, req_out};
use crate::coll::neighbor::*;
use crate::coll::neighbor_w::*;
use crate::consts::*;
use crate::error::{err, out};
use crate::comm::topo::{attach, attach_first, graph_neighbors, ints, put, Topology};
use crate::comm::topo::cart::*;
use crate::comm::topo::dist_graph::*;
use crate::comm::topo::graph::*;

crate::mpi_export! { MPI_Topo_test, PMPI_Topo_test, (comm: MPI_Comm, status: *mut c_int) {
    crate::boundary::call("MPI_Topo_test", comm, move |rt| {
        let o = crate::error::out(status, "status")?;
        *o = rt.comm(comm)?.topo.as_ref().map_or(MPI_UNDEFINED, |t| t.kind());
        Ok(())
    })
}}
crate::mpi_export! { MPI_Dims_create, PMPI_Dims_create, (nnodes: c_int, ndims: c_int, dims: *mut c_int) {
    call("MPI_Dims_create", MPI_COMM_WORLD, |_| {
        if ndims < 0 {
            return err(MPI_ERR_DIMS, format!("ndims {ndims} is negative"));
        }
        let mut d = ints(dims, ndims as usize, "dims")?.to_vec();
        dims_create(nnodes, &mut d)?;
        put(dims, &d, ndims, "dims")
    })
}}
crate::mpi_export! { MPI_Cart_create, PMPI_Cart_create, (comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int,
        _reorder: c_int, comm_cart: *mut MPI_Comm) {
    call("MPI_Cart_create", comm, move |rt| {
        let o = out(comm_cart, "comm_cart")?;
        crate::comm::intra(rt, comm)?;
        let (d, p) = grid(ndims, dims, periods)?;
        let n = nodes(&d);
        *o = attach_first(rt, comm, n, Topology::Cart { dims: d, periods: p })?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Cart_map, PMPI_Cart_map, (comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) {
    call("MPI_Cart_map", comm, move |rt| {
        let o = out(newrank, "newrank")?;
        let c = crate::comm::intra(rt, comm)?;
        let (size, rank) = (c.size(), c.rank);
        let (d, _) = grid(ndims, dims, periods)?;
        let n = nodes(&d);
        if n > size as i64 {
            return err(MPI_ERR_TOPOLOGY, format!("the grid has {n} nodes, the communicator only {size} ranks"));
        }
        *o = if (rank as i64) < n { rank } else { MPI_UNDEFINED };
        Ok(())
    })
}}
crate::mpi_export! { MPI_Cartdim_get, PMPI_Cartdim_get, (comm: MPI_Comm, ndims: *mut c_int) {
    call("MPI_Cartdim_get", comm, move |rt| { let o = out(ndims, "ndims")?; *o = cart(rt, comm)?.0.len() as c_int; Ok(()) })
}}
crate::mpi_export! { MPI_Cart_get, PMPI_Cart_get, (comm: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) {
    call("MPI_Cart_get", comm, move |rt| {
        let (d, p) = cart(rt, comm)?;
        if maxdims < 0 {
            return err(MPI_ERR_ARG, format!("maxdims {maxdims} is negative"));
        }
        let c = Topology::coords(&d, rt.comm(comm)?.rank);
        put(dims, &d, maxdims, "dims")?;
        put(periods, &p.iter().map(|x| *x as c_int).collect::<Vec<_>>(), maxdims, "periods")?;
        put(coords, &c, maxdims, "coords")
    })
}}
crate::mpi_export! { MPI_Cart_rank, PMPI_Cart_rank, (comm: MPI_Comm, coords: *const c_int, rank: *mut c_int) {
    call("MPI_Cart_rank", comm, move |rt| {
        let o = out(rank, "rank")?;
        let (d, p) = cart(rt, comm)?;
        let c = ints(coords, d.len(), "coords")?;
        match Topology::cart_rank(&d, &p, c) {
            Some(r) => { *o = r; Ok(()) }
            None => err(MPI_ERR_ARG, format!("coordinates {c:?} lie outside the non-periodic grid {d:?}")),
        }
    })
}}
crate::mpi_export! { MPI_Cart_coords, PMPI_Cart_coords, (comm: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) {
    call("MPI_Cart_coords", comm, move |rt| {
        let (d, _) = cart(rt, comm)?;
        let size = rt.comm(comm)?.size();
        if rank < 0 || rank >= size {
            return err(MPI_ERR_RANK, format!("invalid rank {rank} (communicator size {size})"));
        }
        if maxdims < d.len() as c_int {
            return err(MPI_ERR_ARG, format!("maxdims {maxdims} is below the {} dimensions", d.len()));
        }
        put(coords, &Topology::coords(&d, rank), maxdims, "coords")
    })
}}
crate::mpi_export! { MPI_Cart_shift, PMPI_Cart_shift, (comm: MPI_Comm, direction: c_int, disp: c_int, source: *mut c_int, dest: *mut c_int) {
    call("MPI_Cart_shift", comm, move |rt| {
        let (s, t) = (out(source, "rank_source")?, out(dest, "rank_dest")?);
        let (d, p) = cart(rt, comm)?;
        if direction < 0 || direction as usize >= d.len() {
            return err(MPI_ERR_ARG, format!("direction {direction} is not one of the {} dimensions", d.len()));
        }
        let (a, b) = Topology::shift(&d, &p, rt.comm(comm)?.rank, direction as usize, disp);
        (*s, *t) = (a, b);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Cart_sub, PMPI_Cart_sub, (comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Cart_sub", comm, move |rt| { let o = out(newcomm, "newcomm")?; *o = cart_sub(rt, comm, remain_dims)?; Ok(()) })
}}
crate::mpi_export! { MPI_Graph_create, PMPI_Graph_create, (comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int,
        _reorder: c_int, comm_graph: *mut MPI_Comm) {
    call("MPI_Graph_create", comm, move |rt| {
        let o = out(comm_graph, "comm_graph")?;
        crate::comm::intra(rt, comm)?;
        let (index, edges) = read(nnodes, index, edges)?;
        *o = attach_first(rt, comm, nnodes as i64, Topology::Graph { index, edges })?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Graph_map, PMPI_Graph_map, (comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) {
    call("MPI_Graph_map", comm, move |rt| {
        let o = out(newrank, "newrank")?;
        let c = crate::comm::intra(rt, comm)?;
        let (size, rank) = (c.size(), c.rank);
        read(nnodes, index, edges)?;
        if nnodes > size {
            return err(MPI_ERR_TOPOLOGY, format!("the graph has {nnodes} nodes, the communicator only {size} ranks"));
        }
        *o = if rank < nnodes { rank } else { MPI_UNDEFINED };
        Ok(())
    })
}}
crate::mpi_export! { MPI_Graphdims_get, PMPI_Graphdims_get, (comm: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) {
    call("MPI_Graphdims_get", comm, move |rt| {
        let (n, e) = (out(nnodes, "nnodes")?, out(nedges, "nedges")?);
        let (index, edges) = graph(rt, comm)?;
        (*n, *e) = (index.len() as c_int, edges.len() as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Graph_get, PMPI_Graph_get, (comm: MPI_Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) {
    call("MPI_Graph_get", comm, move |rt| {
        let (i, e) = graph(rt, comm)?;
        if maxindex < 0 || maxedges < 0 {
            return err(MPI_ERR_ARG, "maxindex and maxedges must not be negative");
        }
        put(index, &i, maxindex, "index")?;
        put(edges, &e, maxedges, "edges")
    })
}}
crate::mpi_export! { MPI_Graph_neighbors_count, PMPI_Graph_neighbors_count, (comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) {
    call("MPI_Graph_neighbors_count", comm, move |rt| {
        let o = out(nneighbors, "nneighbors")?;
        let (i, e) = graph(rt, comm)?;
        node(rt, comm, rank)?;
        *o = graph_neighbors(&i, &e, rank).len() as c_int;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Graph_neighbors, PMPI_Graph_neighbors, (comm: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) {
    call("MPI_Graph_neighbors", comm, move |rt| {
        let (i, e) = graph(rt, comm)?;
        node(rt, comm, rank)?;
        if maxneighbors < 0 {
            return err(MPI_ERR_ARG, format!("maxneighbors {maxneighbors} is negative"));
        }
        put(neighbors, graph_neighbors(&i, &e, rank), maxneighbors, "neighbors")
    })
}}
crate::mpi_export! { MPI_Dist_graph_create_adjacent, PMPI_Dist_graph_create_adjacent, (comm: MPI_Comm, indegree: c_int,
        sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int,
        destweights: *const c_int, info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) {
    call("MPI_Dist_graph_create_adjacent", comm, move |rt| {
        let o = out(comm_dist_graph, "comm_dist_graph")?;
        let size = crate::comm::intra(rt, comm)?.size();
        check_info(info)?;
        let sources = ranks(sources, indegree, size, "sources")?;
        let dests = ranks(destinations, outdegree, size, "destinations")?;
        let sweights = weights(sourceweights, sources.len(), "sourceweights")?;
        let dweights = weights(destweights, dests.len(), "destweights")?;
        *o = attach(rt, comm, Topology::DistGraph { sources, sweights, dests, dweights })?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Dist_graph_create, PMPI_Dist_graph_create, (comm: MPI_Comm, n: c_int, sources: *const c_int,
        degrees: *const c_int, destinations: *const c_int, weights_: *const c_int, info: MPI_Info, _reorder: c_int,
        comm_dist_graph: *mut MPI_Comm) {
    call("MPI_Dist_graph_create", comm, move |rt| {
        let o = out(comm_dist_graph, "comm_dist_graph")?;
        let size = crate::comm::intra(rt, comm)?.size();
        check_info(info)?;
        let srcs = ranks(sources, n, size, "sources")?;
        let degs = ints(degrees, srcs.len(), "degrees")?;
        if let Some(d) = degs.iter().find(|d| **d < 0) {
            return err(MPI_ERR_ARG, format!("degrees holds the negative degree {d}"));
        }
        let total: i64 = degs.iter().map(|d| *d as i64).sum();
        let dsts = ranks(destinations, total as c_int, size, "destinations")?;
        let w = weights(weights_, dsts.len(), "weights")?;
        let mut edges = Vec::with_capacity(dsts.len());
        let mut k = 0;
        for (s, d) in srcs.iter().zip(degs) {
            for _ in 0..*d {
                edges.push((*s, dsts[k], w.as_ref().map_or(1, |w| w[k])));
                k += 1;
            }
        }
        *o = create(rt, comm, edges, w.is_some())?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Dist_graph_neighbors_count, PMPI_Dist_graph_neighbors_count, (comm: MPI_Comm, indegree: *mut c_int,
        outdegree: *mut c_int, weighted: *mut c_int) {
    call("MPI_Dist_graph_neighbors_count", comm, move |rt| {
        let (i, o, w) = (out(indegree, "indegree")?, out(outdegree, "outdegree")?, out(weighted, "weighted")?);
        let Topology::DistGraph { sources, sweights, dests, .. } = dist(rt, comm)? else { unreachable!("checked by dist") };
        (*i, *o, *w) = (sources.len() as c_int, dests.len() as c_int, sweights.is_some() as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Dist_graph_neighbors, PMPI_Dist_graph_neighbors, (comm: MPI_Comm, maxindegree: c_int, sources: *mut c_int,
        sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) {
    call("MPI_Dist_graph_neighbors", comm, move |rt| {
        let Topology::DistGraph { sources: s, sweights, dests, dweights } = dist(rt, comm)? else { unreachable!("checked by dist") };
        if maxindegree < s.len() as c_int || maxoutdegree < dests.len() as c_int {
            return err(MPI_ERR_ARG, format!("room for {maxindegree} sources and {maxoutdegree} destinations; the rank has {} and {}", s.len(), dests.len()));
        }
        put(sources, &s, maxindegree, "sources")?;
        put(destinations, &dests, maxoutdegree, "destinations")?;
        if let Some(w) = sweights.filter(|_| !is_unweighted(sourceweights)) {
            put(sourceweights, &w, maxindegree, "sourceweights")?;
        }
        if let Some(w) = dweights.filter(|_| !is_unweighted(destweights)) {
            put(destweights, &w, maxoutdegree, "destweights")?;
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Neighbor_allgather, PMPI_Neighbor_allgather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_allgather", comm, move |rt| allgather(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_allgather, PMPI_Ineighbor_allgather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ineighbor_allgather", comm, move |rt| { let req = req_out(rt, comm, req)?; allgather(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, req) })
}}
crate::mpi_export! { MPI_Neighbor_allgatherv, PMPI_Neighbor_allgatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, displs: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_allgatherv", comm, move |rt| allgatherv(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(displs), rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_allgatherv, PMPI_Ineighbor_allgatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, displs: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ineighbor_allgatherv", comm, move |rt| { let req = req_out(rt, comm, req)?; allgatherv(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(displs), rtype, comm, req) })
}}
crate::mpi_export! { MPI_Neighbor_alltoall, PMPI_Neighbor_alltoall, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_alltoall", comm, move |rt| alltoall(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_alltoall, PMPI_Ineighbor_alltoall, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ineighbor_alltoall", comm, move |rt| { let req = req_out(rt, comm, req)?; alltoall(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, req) })
}}
crate::mpi_export! { MPI_Neighbor_alltoallv, PMPI_Neighbor_alltoallv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int,
        stype: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_alltoallv", comm, move |rt| alltoallv(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_alltoallv, PMPI_Ineighbor_alltoallv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int,
        stype: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm,
        req: *mut MPI_Request) {
    call("MPI_Ineighbor_alltoallv", comm, move |rt| { let req = req_out(rt, comm, req)?; alltoallv(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, req) })
}}
crate::mpi_export! { MPI_Neighbor_alltoallw, PMPI_Neighbor_alltoallw, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const MPI_Aint,
        stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_alltoallw", comm, move |rt| alltoallw(rt, sbuf, Counts::Int(scounts), sdispls, stypes, rbuf, Counts::Int(rcounts), rdispls, rtypes, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_alltoallw, PMPI_Ineighbor_alltoallw, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const MPI_Aint,
        stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm,
        req: *mut MPI_Request) {
    call("MPI_Ineighbor_alltoallw", comm, move |rt| { let req = req_out(rt, comm, req)?; alltoallw(rt, sbuf, Counts::Int(scounts), sdispls, stypes, rbuf, Counts::Int(rcounts), rdispls, rtypes, comm, req) })
}}
