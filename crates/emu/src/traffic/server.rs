//! The sink: accept connections, read and discard until EOF, close.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;

use super::args::ServerArgs;
use super::{socket, TrafficError};

/// Read buffer per connection.
const READ_BUF_BYTES: usize = 256 * 1024;

/// Runs until killed (or until accept fails for a reason other than an interruption).
pub fn run(args: &ServerArgs) -> Result<(), TrafficError> {
    let listener = socket::listen(&args.bind, args.mptcp)
        .map_err(|e| TrafficError::runtime(format!("--bind {}: {e}", args.bind)))?;
    let local = listener
        .local_addr()
        .map_err(|e| TrafficError::runtime(format!("getsockname: {e}")))?;
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "rove-traffic: listening on {local}");
        let _ = out.flush();
    }
    loop {
        match listener.accept() {
            Ok((stream, _peer)) => {
                std::thread::spawn(move || drain(stream));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            // Out of descriptors or memory for a moment: keep serving the others.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(
                        libc::EMFILE
                            | libc::ENFILE
                            | libc::ENOBUFS
                            | libc::ENOMEM
                            | libc::ECONNABORTED
                    )
                ) =>
            {
                eprintln!("rove-traffic: accept: {e}");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => return Err(TrafficError::runtime(format!("accept on {local}: {e}"))),
        }
    }
}

/// Reads until EOF (or an error such as a reset), then closes the connection, which sends the
/// FIN the client waits for at the end of a sized transfer.
fn drain(mut stream: TcpStream) {
    let mut buf = vec![0u8; READ_BUF_BYTES];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}
