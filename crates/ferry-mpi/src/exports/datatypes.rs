//! Datatypes (MPI-4.1 chapter 5): derived datatype constructors, commit and free, the queries
//! of a type (envelope, contents, extent, size, name), pack and unpack in the native and the
//! external32 forms, addresses, and `MPI_Alloc_mem`/`MPI_Free_mem` (plain `malloc`: no
//! transport here needs registered memory).

use std::os::raw::{c_char, c_int, c_void};

use ferry_data::datatype::Datatype;

use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, out_arg, slice, MpiError, MpiResult};
use crate::op_queries::answer;
use crate::pack::*;
use crate::objects::Runtime;
use crate::typeinfo::*;
use crate::types::*;

crate::mpi_export! { MPI_Type_contiguous, PMPI_Type_contiguous, (count: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_contiguous", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::contiguous(n, &o), newtype, Contents::new(MPI_COMBINER_CONTIGUOUS, vec![count], vec![], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_vector, PMPI_Type_vector, (count: c_int, blocklen: c_int, stride: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_vector", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::vector(n, b, stride as isize, &o), newtype, Contents::new(MPI_COMBINER_VECTOR, vec![count, blocklen, stride], vec![], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_create_hvector, PMPI_Type_create_hvector, (count: c_int, blocklen: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hvector", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::hvector(n, b, stride as isize, &o), newtype, Contents::new(MPI_COMBINER_HVECTOR, vec![count, blocklen], vec![stride], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_indexed, PMPI_Type_indexed, (count: c_int, blocklens: *const c_int, displs: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_indexed", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds: Vec<isize> = slice(displs, n, "array_of_displacements")?.iter().map(|&d| d as isize).collect();
        let (o, c) = child(rt, old)?;
        let ints = [&[count][..], slice(blocklens, n, "")?, slice(displs, n, "")?].concat();
        made(rt, Datatype::indexed(&bl, &ds, &o), newtype, Contents::new(MPI_COMBINER_INDEXED, ints, vec![], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_create_struct, PMPI_Type_create_struct, (count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_struct", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds: Vec<isize> = slice(displs, n, "array_of_displacements")?.iter().map(|&d| d as isize).collect();
        let handles = slice(types, n, "array_of_types")?;
        let (ts, cs) = child_list(rt, handles)?;
        let ints = [&[count][..], slice(blocklens, n, "")?].concat();
        made(rt, crate::types::create_struct(&bl, &ds, handles, &ts), newtype, Contents::new(MPI_COMBINER_STRUCT, ints, ds.clone(), cs))
    })
}}
crate::mpi_export! { MPI_Type_create_resized, PMPI_Type_create_resized, (old: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_resized", MPI_COMM_WORLD, move |rt| {
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::resized(&o, lb as isize, extent as isize), newtype, Contents::new(MPI_COMBINER_RESIZED, vec![], vec![lb, extent], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_dup, PMPI_Type_dup, (old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    let rc = call("MPI_Type_dup", MPI_COMM_WORLD, move |rt| {
        let committed = Runtime::is_predefined_type(old) || rt.types.get(&old).map_or(false, |t| t.1);
        let (o, c) = child(rt, old)?;
        made(rt, Ok(o), newtype, Contents::new(MPI_COMBINER_DUP, vec![], vec![], vec![c]))?;
        // A duplicate is committed when the original is.
        let h = *out_arg(newtype, "newtype")?;
        if let Some(t) = rt.types.get_mut(&h) { t.1 = committed; }
        Ok(())
    });
    if rc != MPI_SUCCESS { return rc; }
    // SAFETY: checked non-null and written by the call above.
    let new = unsafe { *newtype };
    crate::exports::caching::after_dup("MPI_Type_dup", crate::attr::Kind::Type, old, new, |rt| {
        rt.types.remove(&new);
        // SAFETY: as above.
        unsafe { *newtype = MPI_DATATYPE_NULL };
    })
}}
crate::mpi_export! { MPI_Type_commit, PMPI_Type_commit, (dt: *mut MPI_Datatype) {
    call("MPI_Type_commit", MPI_COMM_WORLD, move |rt| {
        let h = with_handle(dt)?;
        if Runtime::is_predefined_type(h) { return Ok(()); }
        match rt.types.get_mut(&h) {
            Some(t) => { t.1 = true; Ok(()) }
            None => err(MPI_ERR_TYPE, format!("invalid datatype handle {h:#x}")),
        }
    })
}}
crate::mpi_export! { MPI_Type_free, PMPI_Type_free, (dt: *mut MPI_Datatype) {
    // SAFETY: MPI passes a pointer to the caller's handle; checked for NULL first.
    let h = if dt.is_null() { MPI_DATATYPE_NULL } else { unsafe { *dt } };
    let rc = crate::exports::caching::before_free("MPI_Type_free", crate::attr::Kind::Type, h);
    if rc != MPI_SUCCESS { return rc; }
    call("MPI_Type_free", MPI_COMM_WORLD, move |rt| {
        let h = with_handle(dt)?;
        if Runtime::is_predefined_type(h) || crate::f90types::is_f90(h) {
            return err(MPI_ERR_TYPE, "predefined datatypes cannot be freed");
        }
        // Pending operations hold their own reference to the type map.
        rt.types.remove(&h).ok_or_else(|| MpiError::new(MPI_ERR_TYPE, format!("invalid datatype handle {h:#x}")))?;
        rt.type_info.remove(&h);
        *out_arg(dt, "datatype")? = MPI_DATATYPE_NULL;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_size, PMPI_Type_size, (dt: MPI_Datatype, size: *mut c_int) {
    let size_of = |t: Datatype| -> MpiResult<()> {
        let s = t.size();
        *out_arg(size, "size")? = if s > c_int::MAX as usize { MPI_UNDEFINED } else { s as c_int };
        Ok(())
    };
    if let Some(rc) = answer(|v| size_of(v.datatype(dt)?)) {
        return rc;
    }
    call("MPI_Type_size", MPI_COMM_WORLD, move |rt| {
        let s = rt.any_datatype(dt)?.size();
        *out_arg(size, "size")? = if s > c_int::MAX as usize { MPI_UNDEFINED } else { s as c_int };
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_get_extent, PMPI_Type_get_extent, (dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) {
    if let Some(rc) = answer(|v| extent_of_type(&v.datatype(dt)?, lb, extent, false)) {
        return rc;
    }
    call("MPI_Type_get_extent", MPI_COMM_WORLD, move |rt| extent_of(rt, dt, lb, extent, false))
}}
crate::mpi_export! { MPI_Type_get_true_extent, PMPI_Type_get_true_extent, (dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) {
    if let Some(rc) = answer(|v| extent_of_type(&v.datatype(dt)?, lb, extent, true)) {
        return rc;
    }
    call("MPI_Type_get_true_extent", MPI_COMM_WORLD, move |rt| extent_of(rt, dt, lb, extent, true))
}}
crate::mpi_export! { MPI_Type_create_hindexed, PMPI_Type_create_hindexed, (count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hindexed", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds = slice(displs, n, "array_of_displacements")?.to_vec();
        let (o, c) = child(rt, old)?;
        let ints = [&[count][..], slice(blocklens, n, "")?].concat();
        made(rt, Datatype::hindexed(&bl, &ds, &o), newtype, Contents::new(MPI_COMBINER_HINDEXED, ints, ds, vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_create_indexed_block, PMPI_Type_create_indexed_block, (count: c_int, blocklen: c_int, displs: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_indexed_block", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let raw = slice(displs, n, "array_of_displacements")?;
        let ds: Vec<isize> = raw.iter().map(|&d| d as isize).collect();
        let (o, c) = child(rt, old)?;
        let ints = [&[count, blocklen][..], raw].concat();
        made(rt, Datatype::indexed_block(b, &ds, &o), newtype, Contents::new(MPI_COMBINER_INDEXED_BLOCK, ints, vec![], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_create_hindexed_block, PMPI_Type_create_hindexed_block, (count: c_int, blocklen: c_int, displs: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hindexed_block", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let ds = slice(displs, n, "array_of_displacements")?.to_vec();
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::hindexed_block(b, &ds, &o), newtype, Contents::new(MPI_COMBINER_HINDEXED_BLOCK, vec![count, blocklen], ds, vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_create_subarray, PMPI_Type_create_subarray, (ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_subarray", MPI_COMM_WORLD, move |rt| {
        let n = ndims_of(ndims)?;
        let (sz, sub, st) = (dims(sizes, n, 1, "array_of_sizes")?, dims(subsizes, n, 1, "array_of_subsizes")?, dims(starts, n, 0, "array_of_starts")?);
        let ord = order_of(order)?;
        let (o, c) = child(rt, old)?;
        let us = |v: &[c_int]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let t = Datatype::subarray(&us(sz), &us(sub), &us(st), ord, &o);
        let ints = [&[ndims][..], sz, sub, st, &[order]].concat();
        made(rt, t, newtype, Contents::new(MPI_COMBINER_SUBARRAY, ints, vec![], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_create_darray, PMPI_Type_create_darray, (size: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_darray", MPI_COMM_WORLD, move |rt| {
        if size <= 0 || rank < 0 || rank >= size {
            return err(MPI_ERR_ARG, format!("rank {rank} of size {size}"));
        }
        let n = ndims_of(ndims)?;
        let (gs, ps) = (dims(gsizes, n, 1, "array_of_gsizes")?, dims(psizes, n, 1, "array_of_psizes")?);
        let (ds, da) = (slice(distribs, n, "array_of_distribs")?, slice(dargs, n, "array_of_dargs")?);
        let dist = distributions(ds, da)?;
        let ord = order_of(order)?;
        let (o, c) = child(rt, old)?;
        let us = |v: &[c_int]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let t = Datatype::darray(size as usize, rank as usize, &us(gs), &dist, &us(ps), ord, &o);
        let ints = [&[size, rank, ndims][..], gs, ds, da, ps, &[order]].concat();
        made(rt, t, newtype, Contents::new(MPI_COMBINER_DARRAY, ints, vec![], vec![c]))
    })
}}
crate::mpi_export! { MPI_Type_get_envelope, PMPI_Type_get_envelope, (dt: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) {
    let write = |[ni, na, nd, comb]: [c_int; 4]| -> MpiResult<()> {
        let outs = (out_arg(num_integers, "num_integers")?, out_arg(num_addresses, "num_addresses")?, out_arg(num_datatypes, "num_datatypes")?, out_arg(combiner, "combiner")?);
        (*outs.0, *outs.1, *outs.2, *outs.3) = (ni, na, nd, comb);
        Ok(())
    };
    if let Some(rc) = answer(|v| write(v.envelope(dt)?)) {
        return rc;
    }
    call("MPI_Type_get_envelope", MPI_COMM_WORLD, move |rt| {
        let envelope = match &contents_of(rt, dt)? {
            Some(c) => {
                c.int_form()?;
                [c.ints.len() as c_int, c.aints.len() as c_int, c.types.len() as c_int, c.combiner]
            }
            None => [0, 0, 0, MPI_COMBINER_NAMED],
        };
        write(envelope)
    })
}}
crate::mpi_export! { MPI_Type_get_contents, PMPI_Type_get_contents, (dt: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, integers: *mut c_int, addresses: *mut MPI_Aint, datatypes: *mut MPI_Datatype) {
    call("MPI_Type_get_contents", MPI_COMM_WORLD, move |rt| {
        let Some(c) = contents_of(rt, dt)? else {
            return err(MPI_ERR_TYPE, "a predefined datatype has no contents");
        };
        c.int_form()?;
        for (what, max, need) in [("max_integers", max_integers, c.ints.len()), ("max_addresses", max_addresses, c.aints.len()), ("max_datatypes", max_datatypes, c.types.len())] {
            if max < 0 || (max as usize) < need {
                return err(MPI_ERR_ARG, format!("{what} {max} is less than the {need} entries"));
            }
        }
        fill_contents(rt, &c, integers, addresses, std::ptr::null_mut(), datatypes)
    })
}}
crate::mpi_export! { MPI_Type_get_name, PMPI_Type_get_name, (dt: MPI_Datatype, name: *mut c_char, resultlen: *mut c_int) {
    call("MPI_Type_get_name", MPI_COMM_WORLD, move |rt| {
        rt.any_datatype(dt)?;
        let set = rt.type_info.get(&dt).and_then(|i| i.name.clone());
        let predefined = crate::predefined::predefined_datatype(dt).map(|p| p.0.to_string());
        let text = set.or(predefined).unwrap_or_default();
        let out = out_slice(name, MPI_MAX_OBJECT_NAME as usize, "type_name")?;
        let len = out_arg(resultlen, "resultlen")?;
        let bytes = &text.as_bytes()[..text.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
        for (o, &b) in out.iter_mut().zip(bytes) { *o = b as c_char; }
        out[bytes.len()] = 0;
        *len = bytes.len() as c_int;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_set_name, PMPI_Type_set_name, (dt: MPI_Datatype, name: *const c_char) {
    call("MPI_Type_set_name", MPI_COMM_WORLD, move |rt| {
        rt.any_datatype(dt)?;
        if name.is_null() { return err(MPI_ERR_ARG, "type_name is NULL"); }
        // SAFETY: MPI passes a NUL-terminated string (checked non-null above).
        let bytes = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes();
        // Longer names are cut to what MPI_Type_get_name can return.
        let kept = &bytes[..bytes.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
        rt.type_info.entry(dt).or_default().name = Some(String::from_utf8_lossy(kept).into_owned());
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_size_x, PMPI_Type_size_x, (dt: MPI_Datatype, size: *mut MPI_Count) {
    let size_of = |t: Datatype| -> MpiResult<()> {
        *out_arg(size, "size")? = t.size() as MPI_Count;
        Ok(())
    };
    if let Some(rc) = answer(|v| size_of(v.datatype(dt)?)) {
        return rc;
    }
    call("MPI_Type_size_x", MPI_COMM_WORLD, move |rt| size_of(rt.any_datatype(dt)?))
}}
crate::mpi_export! { MPI_Type_get_extent_x, PMPI_Type_get_extent_x, (dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) {
    if let Some(rc) = answer(|v| extent_x_of(&v.datatype(dt)?, lb, extent, false)) {
        return rc;
    }
    call("MPI_Type_get_extent_x", MPI_COMM_WORLD, move |rt| extent_x(rt, dt, lb, extent, false))
}}
crate::mpi_export! { MPI_Type_get_true_extent_x, PMPI_Type_get_true_extent_x, (dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) {
    if let Some(rc) = answer(|v| extent_x_of(&v.datatype(dt)?, lb, extent, true)) {
        return rc;
    }
    call("MPI_Type_get_true_extent_x", MPI_COMM_WORLD, move |rt| extent_x(rt, dt, lb, extent, true))
}}
crate::mpi_export! { MPI_Type_match_size, PMPI_Type_match_size, (typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) {
    call("MPI_Type_match_size", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(datatype, "datatype")?;
        let Some((_, candidates)) = MATCHES.iter().find(|m| m.0 == typeclass) else {
            return err(MPI_ERR_ARG, format!("typeclass {typeclass} is no MPI_TYPECLASS_"));
        };
        for &h in candidates.iter() {
            if size >= 0 && rt.any_datatype(h)?.size() == size as usize {
                *o = h;
                return Ok(());
            }
        }
        err(MPI_ERR_ARG, format!("no predefined type of class {typeclass} has size {size}"))
    })
}}
crate::mpi_export! { MPI_Pack, PMPI_Pack, (inbuf: *const c_void, incount: c_int, dt: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, comm: MPI_Comm) {
    call("MPI_Pack", comm, move |rt| {
        let p = out_arg(position, "position")?;
        let mut pos = *p as i64;
        pack(rt, inbuf, incount.into(), dt, outbuf, outsize.into(), &mut pos, comm)?;
        // Within `outsize`, an int.
        *p = pos as c_int;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Unpack, PMPI_Unpack, (inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, dt: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Unpack", comm, move |rt| {
        let p = out_arg(position, "position")?;
        let mut pos = *p as i64;
        unpack(rt, inbuf, insize.into(), &mut pos, outbuf, outcount.into(), dt, comm)?;
        // Within `insize`, an int.
        *p = pos as c_int;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Pack_size, PMPI_Pack_size, (incount: c_int, dt: MPI_Datatype, comm: MPI_Comm, size: *mut c_int) {
    call("MPI_Pack_size", comm, move |rt| {
        let len = pack_size(rt, incount.into(), dt, comm)?;
        let len = c_int::try_from(len).map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("{len} packed bytes do not fit an int")))?;
        *out_arg(size, "size")? = len;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Pack_external, PMPI_Pack_external, (datarep: *const c_char, inbuf: *const c_void, incount: c_int, dt: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) {
    call("MPI_Pack_external", MPI_COMM_WORLD, move |rt| {
        let p = out_arg(position, "position")?;
        let mut pos = *p as i64;
        pack_external(rt, datarep, inbuf, incount.into(), dt, outbuf, outsize as i64, &mut pos)?;
        *p = pos as MPI_Aint;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Unpack_external, PMPI_Unpack_external, (datarep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: c_int, dt: MPI_Datatype) {
    call("MPI_Unpack_external", MPI_COMM_WORLD, move |rt| {
        let p = out_arg(position, "position")?;
        let mut pos = *p as i64;
        unpack_external(rt, datarep, inbuf, insize as i64, &mut pos, outbuf, outcount.into(), dt)?;
        *p = pos as MPI_Aint;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Pack_external_size, PMPI_Pack_external_size, (datarep: *const c_char, incount: c_int, dt: MPI_Datatype, size: *mut MPI_Aint) {
    call("MPI_Pack_external_size", MPI_COMM_WORLD, move |rt| {
        *out_arg(size, "size")? = pack_external_size(rt, datarep, incount.into(), dt)? as MPI_Aint;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Get_address, PMPI_Get_address, (location: *const c_void, address: *mut MPI_Aint) {
    call("MPI_Get_address", MPI_COMM_WORLD, |_| { *out_arg(address, "address")? = location as MPI_Aint; Ok(()) })
}}
crate::mpi_export! { MPI_Alloc_mem, PMPI_Alloc_mem, (size: MPI_Aint, _info: MPI_Info, baseptr: *mut c_void) {
    call("MPI_Alloc_mem", MPI_COMM_WORLD, |_| {
        let o = out_arg(baseptr as *mut *mut c_void, "baseptr")?;
        if size < 0 {
            return err(MPI_ERR_SIZE, format!("size {size} is negative"));
        }
        // SAFETY: plain allocation; at least one byte so that a zero size gets a unique pointer.
        let p = unsafe { libc::malloc((size as usize).max(1)) };
        if p.is_null() {
            return err(MPI_ERR_NO_MEM, format!("cannot allocate {size} bytes"));
        }
        *o = p;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Free_mem, PMPI_Free_mem, (base: *mut c_void) {
    call("MPI_Free_mem", MPI_COMM_WORLD, |_| {
        // SAFETY: MPI requires `base` to come from MPI_Alloc_mem, i.e. from malloc (or NULL).
        unsafe { libc::free(base) };
        Ok(())
    })
}}

#[no_mangle]
pub extern "C" fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}
#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    PMPI_Aint_add(base, disp)
}
#[no_mangle]
pub extern "C" fn PMPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}
#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    PMPI_Aint_diff(addr1, addr2)
}
