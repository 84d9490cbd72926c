//! Communicators made from groups, without a parent communicator (MPI-4 7.4.2, the
//! Sessions Model): `MPI_Comm_create_from_group`, and what it shares with
//! `MPI_Intercomm_create_from_groups` (`intercomm/from_groups.rs`): the arguments besides the
//! groups and the context over which the members agree.

use std::os::raw::c_char;

use crate::consts::*;
use crate::errhandler::check_errhandler;
use crate::error::{c_string, err, MpiResult};
use crate::objects::records::Hints;
use crate::objects::{Comm, Runtime};

/// What every creation of a communicator from groups takes besides its groups (MPI-4 7.4.2,
/// 7.6.2): the string tag, the hints and the error handler for the new communicator.
pub(crate) struct FromGroups {
    pub stringtag: String,
    hints: Hints,
    errhandler: MPI_Errhandler,
}

impl FromGroups {
    pub(crate) fn new(rt: &Runtime, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler) -> MpiResult<Self> {
        let stringtag = c_string(stringtag, "stringtag", MPI_MAX_STRINGTAG_LEN)?;
        let hints = crate::info::optional(rt, info)?;
        check_errhandler(errhandler)?;
        Ok(FromGroups { stringtag, hints, errhandler })
    }

    /// Where the members agree on a context: `MPI_COMM_WORLD`'s internal context, which
    /// every process has whichever model it started with.
    pub(crate) fn context(rt: &Runtime) -> MpiResult<u32> {
        Ok(rt.comm(MPI_COMM_WORLD)?.ctx + 1)
    }

    /// The new communicator `c` with the call's error handler and hints, registered.
    pub(crate) fn finish(self, rt: &mut Runtime, mut c: Comm) -> MPI_Comm {
        c.errhandler = self.errhandler;
        c.hints = self.hints;
        rt.add_comm(c)
    }
}

/// `MPI_Comm_create_from_group`: collective over the group's members, who agree on a context
/// over `MPI_COMM_WORLD`'s internal context with a tag made from the string tag. With
/// `MPI_GROUP_EMPTY` it is local and makes `MPI_COMM_NULL`.
pub(crate) fn create_from_group(rt: &mut Runtime, group: MPI_Group, stringtag: *const c_char, info: MPI_Info, eh: MPI_Errhandler) -> MpiResult<MPI_Comm> {
    let g = rt.group(group)?;
    let args = FromGroups::new(rt, stringtag, info, eh)?;
    if g.is_empty() {
        return Ok(MPI_COMM_NULL);
    }
    let Some(me) = g.iter().position(|&w| w == rt.world_rank) else {
        return err(MPI_ERR_GROUP, "this process is not a member of the group");
    };
    let tag = crate::internal::stringtag_tag(args.stringtag.as_bytes());
    let (ctx, _) = crate::internal::agree_context_among(rt, FromGroups::context(rt)?, &g, me, tag, &[])?;
    let c = Comm::new(ctx, g.to_vec(), rt.world_rank);
    Ok(args.finish(rt, c))
}
