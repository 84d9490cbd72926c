//! The name service: `MPI_Publish_name`, `MPI_Lookup_name`, `MPI_Unpublish_name` over the
//! table `ferry run` keeps for all its jobs (the first and every spawned one). Without
//! `ferry run` (a singleton, Hydra, Slurm) there is no name service: publishing and
//! withdrawing fail with `MPI_ERR_SERVICE`, looking up with `MPI_ERR_NAME`.

use crate::consts::*;
use crate::error::{MpiError, MpiResult};
use crate::objects::Runtime;

pub(crate) fn publish_name(rt: &mut Runtime, service: &str, port: &str) -> MpiResult<()> {
    rt.job().publish_name(service, port).map_err(|why| MpiError::new(MPI_ERR_SERVICE, format!("cannot publish {service:?}: {why}")))
}

pub(crate) fn lookup_name(rt: &mut Runtime, service: &str) -> MpiResult<String> {
    rt.job().lookup_name(service).map_err(|why| MpiError::new(MPI_ERR_NAME, format!("cannot look up {service:?}: {why}")))
}

pub(crate) fn unpublish_name(rt: &mut Runtime, service: &str) -> MpiResult<()> {
    rt.job().unpublish_name(service).map_err(|why| MpiError::new(MPI_ERR_SERVICE, format!("cannot withdraw {service:?}: {why}")))
}
