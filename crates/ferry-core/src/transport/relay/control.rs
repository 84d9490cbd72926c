//! The launcher's control connection to a proxy: blocking, with timeouts, used at job start.
//! It proves the site key, registers the job and its members; the proxy keeps the job as
//! long as the connection lives, so dropping the client ends the job there.

use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use super::handshake::{control_client_proof, verify_control_proxy, FrameBuf};
use super::wire::{ControlRefusal, JobId, Msg, KEY_LEN};
use super::RelayError;

/// An authenticated control connection.
#[derive(Debug)]
pub struct ControlClient {
    stream: TcpStream,
    job: Option<JobId>,
}

impl ControlClient {
    /// Connect to the proxy at `addr` and prove `site_key`; the proxy proves it too. Every
    /// step waits at most `timeout`.
    pub fn connect(addr: SocketAddr, site_key: &[u8], timeout: Duration) -> Result<ControlClient, RelayError> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let _ = stream.set_nodelay(true);
        let mut c = ControlClient { stream, job: None };
        let Msg::Hello { nonce: proxy_nonce } = c.read_frame()? else { return Err(RelayError::Unexpected { expected: "Hello" }) };
        let mut nonce = [0u8; 32];
        getrandom::getrandom(&mut nonce).map_err(|e| RelayError::Io(std::io::Error::other(e.to_string())))?;
        let mac = control_client_proof(site_key, &proxy_nonce, &nonce);
        c.stream.write_all(&Msg::ControlAuth { nonce, mac }.encode())?;
        match c.read_frame()? {
            Msg::ControlWelcome { mac } if verify_control_proxy(site_key, &proxy_nonce, &nonce, &mac) => Ok(c),
            Msg::ControlWelcome { .. } => Err(RelayError::BadProxyProof),
            Msg::Ack { code } => Err(RelayError::Refused(ControlRefusal::from_code(code).unwrap_or(ControlRefusal::Unexpected))),
            _ => Err(RelayError::Unexpected { expected: "ControlWelcome" }),
        }
    }

    /// Register `job` with its relay key (`relay::relay_key` of the job secret) and size.
    pub fn register_job(&mut self, job: JobId, key: [u8; KEY_LEN], size: u32) -> Result<(), RelayError> {
        self.command(&Msg::RegisterJob { job, key, size })?;
        self.job = Some(job);
        Ok(())
    }

    /// Rank `rank` of the registered job listens at `addr` inside the proxy's cluster.
    pub fn add_member(&mut self, rank: u32, addr: SocketAddrV4) -> Result<(), RelayError> {
        let job = self.job.ok_or(RelayError::Refused(ControlRefusal::NoJob))?;
        self.command(&Msg::AddMember { job, rank, addr })
    }

    fn command(&mut self, m: &Msg) -> Result<(), RelayError> {
        self.stream.write_all(&m.encode())?;
        match self.read_frame()? {
            Msg::Ack { code } => match ControlRefusal::from_code(code) {
                None => Ok(()),
                Some(r) => Err(RelayError::Refused(r)),
            },
            _ => Err(RelayError::Unexpected { expected: "Ack" }),
        }
    }

    /// One frame; the proxy never sends a second one before it is answered.
    fn read_frame(&mut self) -> Result<Msg, RelayError> {
        let mut frames = FrameBuf::default();
        let mut buf = [0u8; 128];
        loop {
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(RelayError::Closed);
            }
            if let Some((m, used)) = frames.take(&buf[..n])? {
                if used < n {
                    return Err(RelayError::TrailingBytes);
                }
                return Ok(m);
            }
        }
    }
}

impl AsRawFd for ControlClient {
    /// Poll it for readability: the proxy sends nothing unasked, so readable means it closed.
    fn as_raw_fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }
}
