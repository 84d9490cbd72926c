//! A user's buffer of `count` elements of a datatype as the engine sees it: the bytes a send
//! transmits and the room a receive fills, the buffer itself when the type is contiguous,
//! else a packed copy or a temporary unpacked when the message is in. Point-to-point,
//! partitioned requests and the windows' replies all hand buffers to the engine this way.

use std::os::raw::{c_int, c_void};

use crate::consts::*;
use crate::error::MpiResult;
use crate::objects::request::Unpack;
use crate::objects::Runtime;

/// The bytes a send transmits: the user's buffer itself when the type is contiguous, else a
/// packed copy.
pub struct SendData {
    pub ptr: *const u8,
    pub len: usize,
    pub keep: Option<Vec<u8>>,
}

#[inline(always)]
pub fn send_data(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype) -> MpiResult<SendData> {
    let (size, contiguous) = rt.type_shape(dt)?;
    let len = size * count as usize;
    if contiguous || len == 0 {
        return Ok(SendData { ptr: buf as *const u8, len, keep: None });
    }
    let t = rt.datatype(dt)?;
    let mut v = vec![0u8; len];
    // SAFETY: `buf` holds `count` elements of `t` (MPI's contract for the send buffer).
    unsafe { t.pack(buf as *const u8, count as usize, &mut v) };
    Ok(SendData { ptr: v.as_ptr(), len, keep: Some(v) })
}

pub struct RecvTarget {
    pub ptr: *mut u8,
    pub cap: usize,
    pub unpack: Option<Box<Unpack>>,
}

#[inline(always)]
pub fn recv_target(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype) -> MpiResult<RecvTarget> {
    let (size, contiguous) = rt.type_shape(dt)?;
    let cap = size * count as usize;
    if contiguous || cap == 0 {
        return Ok(RecvTarget { ptr: buf as *mut u8, cap, unpack: None });
    }
    let t = rt.datatype(dt)?;
    let mut tmp = vec![0u8; cap];
    let ptr = tmp.as_mut_ptr();
    Ok(RecvTarget { ptr, cap, unpack: Some(Box::new(Unpack { tmp, dt: t, base: buf as *mut u8, count: count as usize })) })
}
