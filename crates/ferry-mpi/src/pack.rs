//! `MPI_Pack` and friends: the native packed form (the bytes a send of the type would carry),
//! and the portable "external32" form of `ferry_data::datatype`.

use std::ffi::CStr;
use std::os::raw::{c_char, c_void};

use ferry_data::datatype::Datatype;

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

fn count_of(n: i64) -> MpiResult<usize> {
    if n < 0 {
        return err(MPI_ERR_COUNT, format!("count {n} is negative"));
    }
    usize::try_from(n).map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("count {n} does not fit this machine's address space")))
}

/// The position `*p` inside a buffer of `size` bytes, and the `need` bytes from it.
fn window(p: i64, size: i64, need: usize, what: &str) -> MpiResult<std::ops::Range<usize>> {
    if size < 0 {
        return err(MPI_ERR_ARG, format!("{what} {size} is negative"));
    }
    if p < 0 || p > size {
        return err(MPI_ERR_ARG, format!("position {p} lies outside the {size} bytes of the buffer"));
    }
    let (start, size) = (p as usize, size as usize);
    if need > size - start {
        return err(MPI_ERR_TRUNCATE, format!("{need} bytes do not fit the {} left after position {p}", size - start));
    }
    Ok(start..start + need)
}

fn buffer<'a>(p: *const c_void, len: usize, what: &str) -> MpiResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return err(MPI_ERR_BUFFER, format!("{what} is NULL"));
    }
    // SAFETY: MPI's contract: the packed buffer holds `size` bytes, of which we use a part.
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}

fn packed_len(t: &Datatype, count: usize) -> MpiResult<usize> {
    t.packed_len(count).ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the packed size overflows"))
}

fn external_len(t: &Datatype, count: usize) -> MpiResult<usize> {
    t.external32_size().and_then(|s| s.checked_mul(count)).ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the packed size overflows"))
}

fn check_datarep(datarep: *const c_char) -> MpiResult<()> {
    if datarep.is_null() {
        return err(MPI_ERR_ARG, "datarep is NULL");
    }
    // SAFETY: MPI passes a NUL-terminated string (checked non-null above).
    match unsafe { CStr::from_ptr(datarep) }.to_bytes() {
        b"external32" => Ok(()),
        other => err(MPI_ERR_UNSUPPORTED_DATAREP, format!("data representation {:?} (only \"external32\")", String::from_utf8_lossy(other))),
    }
}

fn conversion(e: ferry_data::datatype::ConversionError) -> MpiError {
    MpiError::new(MPI_ERR_CONVERSION, e.to_string())
}

fn typed(rt: &mut Runtime, dt: MPI_Datatype, count: i64) -> MpiResult<(Datatype, usize)> {
    let n = count_of(count)?;
    Ok((rt.datatype(dt)?, n))
}

// The bodies take 64-bit counts, sizes and positions so that the `_c` functions of
// `large_count` share them; the int-count functions below widen their arguments.

/// MPI_Pack: packs `incount` elements at `*pos` of `outbuf` (`outsize` bytes) and advances it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pack(rt: &mut Runtime, inbuf: *const c_void, incount: i64, dt: MPI_Datatype, outbuf: *mut c_void, outsize: i64, pos: &mut i64, comm: MPI_Comm) -> MpiResult<()> {
    rt.comm(comm)?;
    let (t, n) = typed(rt, dt, incount)?;
    let w = window(*pos, outsize, packed_len(&t, n)?, "outsize")?;
    let out = buffer(outbuf, w.end, "outbuf")?;
    // SAFETY: MPI's contract: `inbuf` holds `incount` copies of the type.
    unsafe { t.pack(inbuf as *const u8, n, &mut out[w.clone()]) };
    *pos = w.end as i64;
    Ok(())
}

/// MPI_Unpack: the reverse of [`pack`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn unpack(rt: &mut Runtime, inbuf: *const c_void, insize: i64, pos: &mut i64, outbuf: *mut c_void, outcount: i64, dt: MPI_Datatype, comm: MPI_Comm) -> MpiResult<()> {
    rt.comm(comm)?;
    let (t, n) = typed(rt, dt, outcount)?;
    let w = window(*pos, insize, packed_len(&t, n)?, "insize")?;
    let src = buffer(inbuf, w.end, "inbuf")?;
    // SAFETY: MPI's contract: `outbuf` holds `outcount` copies of the type.
    unsafe { t.unpack(&src[w.clone()], outbuf as *mut u8, n) };
    *pos = w.end as i64;
    Ok(())
}

/// MPI_Pack_size: the bytes MPI_Pack needs for `incount` elements.
pub(crate) fn pack_size(rt: &mut Runtime, incount: i64, dt: MPI_Datatype, comm: MPI_Comm) -> MpiResult<usize> {
    rt.comm(comm)?;
    let (t, n) = typed(rt, dt, incount)?;
    packed_len(&t, n)
}

/// MPI_Pack_external: as [`pack`], in the external32 representation.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pack_external(rt: &mut Runtime, datarep: *const c_char, inbuf: *const c_void, incount: i64, dt: MPI_Datatype, outbuf: *mut c_void, outsize: i64, pos: &mut i64) -> MpiResult<()> {
    check_datarep(datarep)?;
    let (t, n) = typed(rt, dt, incount)?;
    let w = window(*pos, outsize, external_len(&t, n)?, "outsize")?;
    let out = buffer(outbuf, w.end, "outbuf")?;
    // SAFETY: MPI's contract: `inbuf` holds `incount` copies of the type.
    unsafe { t.pack_external32(inbuf as *const u8, n, &mut out[w.clone()]) }.map_err(conversion)?;
    *pos = w.end as i64;
    Ok(())
}

/// MPI_Unpack_external: the reverse of [`pack_external`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn unpack_external(rt: &mut Runtime, datarep: *const c_char, inbuf: *const c_void, insize: i64, pos: &mut i64, outbuf: *mut c_void, outcount: i64, dt: MPI_Datatype) -> MpiResult<()> {
    check_datarep(datarep)?;
    let (t, n) = typed(rt, dt, outcount)?;
    let w = window(*pos, insize, external_len(&t, n)?, "insize")?;
    let src = buffer(inbuf, w.end, "inbuf")?;
    // SAFETY: MPI's contract: `outbuf` holds `outcount` copies of the type.
    unsafe { t.unpack_external32(&src[w.clone()], outbuf as *mut u8, n) }.map_err(conversion)?;
    *pos = w.end as i64;
    Ok(())
}

/// MPI_Pack_external_size.
pub(crate) fn pack_external_size(rt: &mut Runtime, datarep: *const c_char, incount: i64, dt: MPI_Datatype) -> MpiResult<usize> {
    check_datarep(datarep)?;
    let (t, n) = typed(rt, dt, incount)?;
    external_len(&t, n)
}
