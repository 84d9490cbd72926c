//! Addresses and memory: `MPI_Get_address`, `MPI_Aint_add`/`MPI_Aint_diff`, and
//! `MPI_Alloc_mem`/`MPI_Free_mem` (plain `malloc`: no transport here needs registered memory).

use std::os::raw::c_void;

use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::err;

crate::mpi_export! { MPI_Get_address, PMPI_Get_address, (location: *const c_void, address: *mut MPI_Aint) {
    call("MPI_Get_address", MPI_COMM_WORLD, |_| { *out_arg(address, "address")? = location as MPI_Aint; Ok(()) })
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

