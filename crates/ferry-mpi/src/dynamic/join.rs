//! `MPI_Comm_join`: two processes that share a connected socket meet as they would through a
//! port. Each opens a port and writes its name down the socket (a 4-byte little-endian length,
//! then the name); the one whose name sorts first accepts on its port, the other connects
//! to it, both over `MPI_COMM_SELF`. The socket carries only the two names and stays the
//! caller's, open.

use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use super::{close_port, meet, open_port, Role, MAX_PORT_NAME};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

pub(crate) fn join(rt: &mut Runtime, fd: i32) -> MpiResult<i32> {
    if fd < 0 {
        return err(MPI_ERR_ARG, format!("{fd} is not a file descriptor"));
    }
    // SAFETY: the caller lends `fd`, a connected socket, for the call; ManuallyDrop keeps it
    // open afterwards, as MPI requires. File's read and write are read(2) and write(2).
    let mut socket = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    let mine = open_port(rt)?;
    let result = trade_and_meet(rt, &mut socket, &mine);
    close_port(rt, &mine)?;
    result
}

fn trade_and_meet(rt: &mut Runtime, socket: &mut File, mine: &str) -> MpiResult<i32> {
    let io = |e: std::io::Error| MpiError::new(MPI_ERR_OTHER, format!("the socket of MPI_Comm_join: {e}"));
    let mut word = (mine.len() as u32).to_le_bytes().to_vec();
    word.extend_from_slice(mine.as_bytes());
    socket.write_all(&word).map_err(io)?;
    let mut len = [0u8; 4];
    socket.read_exact(&mut len).map_err(io)?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len >= MAX_PORT_NAME {
        return err(MPI_ERR_OTHER, format!("the other end of the socket sent a {len}-byte port name: is it calling MPI_Comm_join?"));
    }
    let mut theirs = vec![0u8; len];
    socket.read_exact(&mut theirs).map_err(io)?;
    let theirs = String::from_utf8(theirs).map_err(|_| MpiError::new(MPI_ERR_OTHER, "the other end of the socket sent no port name"))?;
    if theirs.as_str() == mine {
        return err(MPI_ERR_OTHER, "the socket of MPI_Comm_join leads back to this process");
    }
    let role = if mine < theirs.as_str() { Role::Accept(mine) } else { Role::Connect(&theirs) };
    meet(rt, MPI_COMM_SELF, 0, role)
}
