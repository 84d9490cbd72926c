//! Setting and asking a file's view (MPI-4.0 14.3) and the queries that read it: the byte
//! offset of a position, a datatype's extent in the file, the file pointers' positions.

use std::os::raw::c_int;

use super::{exchange, file, first_error, view};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::records::Hints;
use crate::objects::Runtime;

/// The data representations Ferry writes: `native` (memory's bytes), and `internal`, which
/// Ferry chooses to be the same.
fn datarep_ok(datarep: &str) -> MpiResult<()> {
    match datarep {
        "native" | "internal" => Ok(()),
        "external32" => err(MPI_ERR_UNSUPPORTED_DATAREP, "the data representation \"external32\" is not implemented yet (native and internal are)"),
        _ => err(MPI_ERR_UNSUPPORTED_DATAREP, format!("unknown data representation {datarep:?}")),
    }
}

/// `MPI_File_set_view`. Every member gives the same etype size and data representation; the
/// view's checks run on each member and a failure on one fails all.
pub fn set_view(rt: &mut Runtime, fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: &str, hints: Hints) -> MpiResult<()> {
    let mode = file(rt, fh)?.amode;
    let local = (|| {
        let disp = if disp == MPI_DISPLACEMENT_CURRENT as MPI_Offset {
            if mode & MPI_MODE_SEQUENTIAL == 0 {
                return err(MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT is for files opened with MPI_MODE_SEQUENTIAL");
            }
            let f = file(rt, fh)?;
            let sp = f.shared.get()?;
            f.view.byte_of(sp * f.view.esize)
        } else if disp < 0 {
            return err(MPI_ERR_ARG, format!("displacement {disp} is negative"));
        } else {
            disp as u64
        };
        let e = rt.datatype(etype)?;
        let t = rt.datatype(filetype)?;
        datarep_ok(datarep)?;
        let shape = view::Shape::new(disp, e.size(), &t)?;
        let esize = e.size() as u64;
        Ok((shape, esize))
    })();
    let class = local.as_ref().err().map_or(MPI_SUCCESS, |e| e.class);
    let mut mine = class.to_le_bytes().to_vec();
    mine.extend_from_slice(&local.as_ref().map_or(0, |s| s.1).to_le_bytes());
    mine.extend_from_slice(&crate::internal::fnv1a(datarep.as_bytes()).to_le_bytes());
    let all = exchange(rt, fh, &mine)?;
    let (shape, _) = match (local, first_error(&all)) {
        (Err(e), _) => return Err(e),
        (Ok(_), Some((r, c))) => return err(c, format!("MPI_File_set_view failed on rank {r} of the file's group")),
        (Ok(s), None) => s,
    };
    if all.iter().any(|b| b[4..] != mine[4..]) {
        return err(MPI_ERR_NOT_SAME, "the etype's size or the data representation differs between the members of the file's group");
    }
    let f = file(rt, fh)?;
    f.view = shape;
    f.etype = etype;
    f.filetype = filetype;
    f.datarep = datarep.to_string();
    f.pointer = 0;
    for (k, v) in hints {
        crate::info::set(&mut f.hints, &k, &v);
    }
    // The shared pointer goes back to 0 once every member is done with it under the old view.
    let r = if f.rank == 0 { f.shared.set(0).map(|_| ()) } else { Ok(()) };
    super::agree(rt, fh, r, "resetting the shared file pointer")
}

/// `MPI_File_get_view`: the displacement, the etype and filetype handles given to
/// `MPI_File_set_view` (derived ones duplicated, as MPI asks), and the representation.
pub fn get_view(rt: &mut Runtime, fh: MPI_File) -> MpiResult<(MPI_Offset, MPI_Datatype, MPI_Datatype, String)> {
    let f = file(rt, fh)?;
    let (disp, etype, filetype, rep) = (f.view.disp as MPI_Offset, f.etype, f.filetype, f.datarep.clone());
    Ok((disp, duplicate(rt, etype)?, duplicate(rt, filetype)?, rep))
}

/// A new committed handle of derived datatype `h`; a predefined one as it is.
fn duplicate(rt: &mut Runtime, h: MPI_Datatype) -> MpiResult<MPI_Datatype> {
    let Some((t, _)) = rt.types.get(&h) else {
        return Ok(h);
    };
    let t = t.clone();
    let d = rt.add_type(t);
    if let Some(e) = rt.types.get_mut(&d) {
        e.1 = true;
    }
    Ok(d)
}

/// `MPI_File_get_byte_offset`: where, in bytes from the file's start, view position `offset`
/// (in etypes) lies.
pub fn byte_offset(rt: &mut Runtime, fh: MPI_File, offset: MPI_Offset) -> MpiResult<MPI_Offset> {
    if offset < 0 {
        return err(MPI_ERR_ARG, format!("offset {offset} is negative"));
    }
    let f = file(rt, fh)?;
    Ok(f.view.byte_of(offset as u64 * f.view.esize) as MPI_Offset)
}

/// `MPI_File_get_type_extent`: with the native representation, the datatype's extent.
pub fn type_extent(rt: &mut Runtime, fh: MPI_File, dt: MPI_Datatype) -> MpiResult<MPI_Aint> {
    file(rt, fh)?;
    Ok(rt.any_datatype(dt)?.extent())
}

/// `MPI_File_get_position` (`shared`: `_shared`), in etypes.
pub fn position(rt: &mut Runtime, fh: MPI_File, shared: bool) -> MpiResult<MPI_Offset> {
    let f = file(rt, fh)?;
    if shared {
        return Ok(f.shared.get()? as MPI_Offset);
    }
    if f.amode & MPI_MODE_SEQUENTIAL != 0 {
        return err(MPI_ERR_UNSUPPORTED_OPERATION, "a file opened with MPI_MODE_SEQUENTIAL has no individual file pointer");
    }
    Ok(f.pointer as MPI_Offset)
}

/// `MPI_File_set_atomicity`: the same flag on every member.
pub fn set_atomicity(rt: &mut Runtime, fh: MPI_File, flag: c_int) -> MpiResult<()> {
    let on = flag != 0;
    super::same(rt, fh, Ok(()), &[on as u8], "the atomicity flag")?;
    file(rt, fh)?.atomic = on;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_and_internal_are_written_and_external32_is_not_yet() {
        assert!(datarep_ok("native").is_ok());
        assert!(datarep_ok("internal").is_ok());
        assert_eq!(datarep_ok("external32").unwrap_err().class, MPI_ERR_UNSUPPORTED_DATAREP);
        assert_eq!(datarep_ok("NATIVE").unwrap_err().class, MPI_ERR_UNSUPPORTED_DATAREP);
    }
}
