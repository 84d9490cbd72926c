//! The info object (MPI-4.1 chapter 10): create, set, get, delete, duplicate and free.

use std::os::raw::{c_char, c_int};

use crate::boundary::{call, call_runtime_or_not};
use crate::consts::*;
use crate::error::{err, out_arg};
use crate::info::*;

crate::mpi_export! { MPI_Info_create, PMPI_Info_create, (info: *mut MPI_Info) {
    call_runtime_or_not("MPI_Info_create", move |_| { let o = out_arg(info, "info")?; *o = add(Vec::new()); Ok(()) })
}}
crate::mpi_export! { MPI_Info_set, PMPI_Info_set, (info: MPI_Info, key: *const c_char, value: *const c_char) {
    call_runtime_or_not("MPI_Info_set", move |_| {
        let k = key_arg(key)?;
        let v = c_str(value, MPI_ERR_INFO_VALUE, "value", MAX_INFO_VAL)?;
        with_hints_mut(info, |h| {
            set(h, k, v);
            Ok(())
        })
    })
}}
crate::mpi_export! { MPI_Info_get, PMPI_Info_get, (info: MPI_Info, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) {
    call_runtime_or_not("MPI_Info_get", move |rt| {
        let h = hints_of(rt.as_deref().map(|r| &**r), info)?;
        let k = key_arg(key)?;
        if valuelen < 0 {
            return err(MPI_ERR_ARG, format!("valuelen {valuelen} is negative"));
        }
        if value.is_null() {
            return err(MPI_ERR_ARG, "value is NULL");
        }
        let f = out_arg(flag, "flag")?;
        match lookup(&h, k) {
            Some(v) => { copy_out(v, value, valuelen as usize); *f = 1; }
            None => *f = 0,
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Info_get_valuelen, PMPI_Info_get_valuelen, (info: MPI_Info, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) {
    call_runtime_or_not("MPI_Info_get_valuelen", move |rt| {
        let h = hints_of(rt.as_deref().map(|r| &**r), info)?;
        let k = key_arg(key)?;
        let (l, f) = (out_arg(valuelen, "valuelen")?, out_arg(flag, "flag")?);
        match lookup(&h, k) {
            Some(v) => { *l = v.len() as c_int; *f = 1; }
            None => *f = 0,
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Info_get_string, PMPI_Info_get_string, (info: MPI_Info, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) {
    call_runtime_or_not("MPI_Info_get_string", move |rt| {
        let h = hints_of(rt.as_deref().map(|r| &**r), info)?;
        let k = key_arg(key)?;
        let (l, f) = (out_arg(buflen, "buflen")?, out_arg(flag, "flag")?);
        if *l < 0 {
            return err(MPI_ERR_ARG, format!("buflen {} is negative", *l));
        }
        if *l > 0 && value.is_null() {
            return err(MPI_ERR_ARG, "value is NULL");
        }
        match lookup(&h, k) {
            Some(v) => {
                if *l > 0 {
                    copy_out(v, value, *l as usize - 1);
                }
                *l = v.len() as c_int + 1;
                *f = 1;
            }
            None => *f = 0,
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Info_get_nkeys, PMPI_Info_get_nkeys, (info: MPI_Info, nkeys: *mut c_int) {
    call_runtime_or_not("MPI_Info_get_nkeys", move |rt| { let n = hints_of(rt.as_deref().map(|r| &**r), info)?.len(); *out_arg(nkeys, "nkeys")? = n as c_int; Ok(()) })
}}
crate::mpi_export! { MPI_Info_get_nthkey, PMPI_Info_get_nthkey, (info: MPI_Info, n: c_int, key: *mut c_char) {
    call_runtime_or_not("MPI_Info_get_nthkey", move |rt| {
        let h = hints_of(rt.as_deref().map(|r| &**r), info)?;
        if n < 0 || n as usize >= h.len() {
            return err(MPI_ERR_ARG, format!("n {n} is not below the number of keys, {}", h.len()));
        }
        if key.is_null() {
            return err(MPI_ERR_ARG, "key is NULL");
        }
        copy_out(&h[n as usize].0, key, MAX_INFO_KEY);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Info_delete, PMPI_Info_delete, (info: MPI_Info, key: *const c_char) {
    call_runtime_or_not("MPI_Info_delete", move |_| {
        let k = key_arg(key)?;
        with_hints_mut(info, |h| match h.iter().position(|(x, _)| x == k) {
            Some(i) => { h.remove(i); Ok(()) }
            None => err(MPI_ERR_INFO_NOKEY, format!("key \"{k}\" is not in the info object")),
        })
    })
}}
crate::mpi_export! { MPI_Info_dup, PMPI_Info_dup, (info: MPI_Info, newinfo: *mut MPI_Info) {
    call_runtime_or_not("MPI_Info_dup", move |rt| { let h = hints_of(rt.as_deref().map(|r| &**r), info)?; let o = out_arg(newinfo, "newinfo")?; *o = add(h); Ok(()) })
}}
crate::mpi_export! { MPI_Info_free, PMPI_Info_free, (info: *mut MPI_Info) {
    call_runtime_or_not("MPI_Info_free", move |_| {
        let o = out_arg(info, "info")?;
        free(*o)?;
        *o = MPI_INFO_NULL;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_set_info, PMPI_Comm_set_info, (comm: MPI_Comm, info: MPI_Info) {
    call("MPI_Comm_set_info", comm, move |rt| {
        rt.comm(comm)?;
        let given = hints(rt, info)?;
        let c = rt.comms.get_mut(&comm).expect("checked above");
        given.iter().for_each(|(k, v)| set(&mut c.hints, k, v));
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_get_info, PMPI_Comm_get_info, (comm: MPI_Comm, info: *mut MPI_Info) {
    call("MPI_Comm_get_info", comm, move |rt| {
        let h = rt.comm(comm)?.hints.clone();
        let o = out_arg(info, "info_used")?;
        *o = add(h);
        Ok(())
    })
}}
