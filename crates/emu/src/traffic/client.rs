//! The sender: connect with the requested congestion control, send, sample TCP_INFO, report.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::args::{Amount, ClientArgs};
use super::{handoff, mptcp, signals, socket, tcp_info, TrafficError};

/// Bytes per write(2).
const WRITE_CHUNK_BYTES: usize = 128 * 1024;
/// Socket send/receive timeouts: how soon a blocked loop notices a stop request.
const POLL_TIMEOUT: Duration = Duration::from_millis(50);
/// Output buffer (≈ 5 000 samples of TCP; flushed when full and at the end).
const OUT_BUF_BYTES: usize = 1 << 20;

/// Why the transfer ended (`"end"` of the final line).
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    Eof,
    Duration,
    Signal,
    Error,
}

impl End {
    fn name(self) -> &'static str {
        match self {
            End::Eof => "eof",
            End::Duration => "duration",
            End::Signal => "signal",
            End::Error => "error",
        }
    }
}

/// The data bytes acknowledged, from the kernel's count `raw`.
///
/// `tcpi_bytes_acked` is `snd_una` minus the initial sequence number, so it counts the SYN and,
/// once acknowledged, the FIN (one sequence number each; MPTCP's DATA_FIN likewise). Minus the
/// SYN, it can exceed the bytes the application wrote only by the FIN, so clamping to `written`
/// removes exactly that.
fn data_bytes_acked(raw: u64, syn_counted: bool, written: u64) -> u64 {
    raw.saturating_sub(syn_counted as u64).min(written)
}

/// Connection-level and per-subflow keys of one TCP_INFO reading, bytes_acked corrected.
/// `written` is read after the kernel's counters, so it bounds them (up to the one write(2) in
/// progress, whose bytes the kernel may take before the counter adds them).
fn measure(p: &Probe) -> Option<(tcp_info::Sample, Option<MptcpReading>)> {
    let (fd, mptcp_socket) = (p.fd, p.mptcp);
    let (info, len) = tcp_info::read(fd).ok()?;
    let data_level = if mptcp_socket {
        mptcp::data_counters(fd)
    } else {
        None
    };
    let written = p.written.load(Ordering::SeqCst);
    let mut sample = tcp_info::Sample::from_info(&info, len);
    sample.bytes_acked = sample
        .bytes_acked
        .map(|raw| data_bytes_acked(raw, true, written));
    if !mptcp_socket {
        return Some((sample, None));
    }
    // MPTCP: the data-level counts (no SYN in the data sequence space), else the subflows' sums;
    // retransmissions are the subflows' sum.
    let mut subflows = mptcp::subflows(fd).unwrap_or_default();
    for sf in &mut subflows {
        let sent = sf.sample.bytes_sent.unwrap_or(u64::MAX);
        sf.sample.bytes_acked = sf
            .sample
            .bytes_acked
            .map(|raw| data_bytes_acked(raw, true, sent));
    }
    let sum = |f: fn(&tcp_info::Sample) -> Option<u64>| {
        subflows.iter().filter_map(|s| f(&s.sample)).sum::<u64>()
    };
    match &data_level {
        Some(d) => {
            sample.bytes_acked = Some(data_bytes_acked(d.bytes_acked, false, written));
            sample.bytes_sent = Some(d.bytes_sent);
        }
        None => {
            sample.bytes_acked = Some(sum(|s| s.bytes_acked).min(written));
            sample.bytes_sent = Some(sum(|s| s.bytes_sent));
        }
    }
    if !subflows.is_empty() {
        sample.retrans_segs = subflows.iter().map(|s| s.sample.retrans_segs).sum();
    }
    p.remember(&subflows);
    let data_retrans_bytes = data_level.map(|d| d.bytes_retrans);
    Some((
        sample,
        Some(MptcpReading {
            subflows,
            data_retrans_bytes,
        }),
    ))
}

/// What an MPTCP socket adds to a reading: its subflows and the data level's retransmitted
/// bytes (`None` before Linux 6.5's `MPTCP_INFO` counters).
struct MptcpReading {
    subflows: Vec<mptcp::Subflow>,
    data_retrans_bytes: Option<u64>,
}

impl MptcpReading {
    fn insert_into(&self, m: &mut Map<String, Value>) {
        m.insert("data_retrans_bytes".into(), json!(self.data_retrans_bytes));
        m.insert(
            "subflows".into(),
            Value::Array(self.subflows.iter().map(mptcp::Subflow::to_json).collect()),
        );
    }
}

/// What the sampler and the final line read: the socket and the client's own counters.
struct Probe<'a> {
    fd: RawFd,
    mptcp: bool,
    /// Bytes the kernel accepted from the client.
    written: &'a AtomicU64,
    /// Every subflow seen so far with its latest reading, in order of appearance: the final
    /// line reports them all, also those the kernel closed before the end (at the end of a
    /// sized transfer it may tear subflows down before the last reading).
    seen: Mutex<Vec<mptcp::Subflow>>,
}

impl Probe<'_> {
    fn remember(&self, current: &[mptcp::Subflow]) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        for sf in current {
            let key = (sf.local, sf.remote);
            match seen.iter_mut().find(|s| (s.local, s.remote) == key) {
                Some(old) => *old = sf.clone(),
                None => seen.push(sf.clone()),
            }
        }
    }
}

/// One sample line's object.
fn sample_json(p: &Probe, t_s: f64) -> Option<Value> {
    let (sample, subflows) = measure(p)?;
    let fd = p.fd;
    let mut m = Map::new();
    m.insert("t_s".into(), json!(round_us(t_s)));
    m.extend(sample.to_json());
    m.insert("cc".into(), json!(socket::congestion_control(fd).ok()));
    if let Some(mp) = subflows {
        mp.insert_into(&mut m);
    }
    Some(Value::Object(m))
}

fn round_us(t_s: f64) -> f64 {
    (t_s * 1e6).round() / 1e6
}

/// What the sampler thread hands back: the writer, the samples written, a write error, the
/// switches applied and a switch that failed.
struct Sampled {
    out: BufWriter<File>,
    count: u64,
    write_error: Option<std::io::Error>,
    switched: Vec<handoff::Applied>,
    switch_error: Option<String>,
}

/// Samples every `interval` on a fixed schedule until `done`, and applies each of `switches`
/// at its time (waking for it, not at the next sample).
fn sample_loop(
    probe: &Probe,
    start: Instant,
    interval: Duration,
    switches: &[handoff::Switch],
    done: &AtomicBool,
    out: BufWriter<File>,
) -> Sampled {
    let first = Instant::now();
    let mut r = Sampled {
        out,
        count: 0,
        write_error: None,
        switched: Vec::new(),
        switch_error: None,
    };
    let mut history = handoff::History::default();
    let mut min_rtt_us = 0u64;
    let mut next_switch = 0usize;
    let mut tick = 0u32;
    let mut due = first;
    loop {
        if done.load(Ordering::SeqCst) || signals::stop_requested() {
            return r;
        }
        let now = Instant::now();
        while r.switch_error.is_none()
            && next_switch < switches.len()
            && now >= start + switches[next_switch].at
        {
            let sw = &switches[next_switch];
            next_switch += 1;
            match handoff::apply(probe.fd, sw, &history, min_rtt_us) {
                Ok(cwnd) => r.switched.push(handoff::Applied {
                    t_s: round_us(start.elapsed().as_secs_f64()),
                    cc: sw.cc.clone(),
                    cwnd,
                }),
                Err(e) => r.switch_error = Some(format!("switch at {:?} to {}: {e}", sw.at, sw.cc)),
            }
        }
        if now >= due {
            if let Some(line) = sample_json(probe, now.duration_since(start).as_secs_f64()) {
                let cwnd = line["cwnd_pkts"].as_u64().unwrap_or(0) as u32;
                let srtt_us = (line["srtt_ms"].as_f64().unwrap_or(0.0) * 1000.0).round() as u64;
                if let Some(m) = line["min_rtt_ms"].as_f64() {
                    min_rtt_us = (m * 1000.0).round() as u64;
                }
                history.push(cwnd, srtt_us);
                if let Err(e) = serde_json::to_writer(&mut r.out, &line)
                    .map_err(std::io::Error::from)
                    .and_then(|()| r.out.write_all(b"\n"))
                {
                    r.write_error = Some(e);
                    return r;
                }
                r.count += 1;
            }
            // Next tick on the absolute schedule; skip ticks already missed (a stalled machine).
            tick += 1;
            due = first + interval * tick;
            let now = Instant::now();
            while due <= now {
                tick += 1;
                due = first + interval * tick;
            }
        }
        let wake = match switches.get(next_switch) {
            Some(sw) if r.switch_error.is_none() => due.min(start + sw.at),
            _ => due,
        };
        // Sleep in short steps so a stop is seen within ~50 ms even with long intervals.
        while Instant::now() < wake {
            if done.load(Ordering::SeqCst) || signals::stop_requested() {
                break;
            }
            std::thread::sleep((wake - Instant::now()).min(POLL_TIMEOUT));
        }
    }
}

/// Sends according to `amount`; returns why it ended and, for a completed sized transfer, when.
/// `written` counts the bytes the kernel accepted.
fn transfer(
    stream: &mut TcpStream,
    amount: Amount,
    start: Instant,
    written: &AtomicU64,
) -> (End, Option<Instant>, Option<String>) {
    let chunk = vec![0x5au8; WRITE_CHUNK_BYTES];
    let mut remaining = match amount {
        Amount::Bytes(n) => n,
        _ => u64::MAX,
    };
    let deadline = match amount {
        Amount::Duration(d) => Some(start + d),
        _ => None,
    };
    while remaining > 0 {
        if signals::stop_requested() {
            return (End::Signal, None, None);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return (End::Duration, None, None);
        }
        let n = remaining.min(chunk.len() as u64) as usize;
        match stream.write(&chunk[..n]) {
            Ok(0) => {
                return (
                    End::Error,
                    None,
                    Some("write: connection closed by the server".into()),
                )
            }
            Ok(w) => {
                written.fetch_add(w as u64, Ordering::SeqCst);
                if !matches!(amount, Amount::Bytes(_)) {
                    continue;
                }
                remaining -= w as u64;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return (End::Error, None, Some(format!("write: {e}"))),
        }
    }
    // Sized transfer: all bytes are in the socket; half-close and wait for the server's EOF.
    if let Err(e) = stream.shutdown(Shutdown::Write) {
        return (End::Error, None, Some(format!("shutdown: {e}")));
    }
    let mut buf = [0u8; 4096];
    loop {
        if signals::stop_requested() {
            return (End::Signal, None, None);
        }
        match stream.read(&mut buf) {
            Ok(0) => return (End::Eof, Some(Instant::now()), None),
            Ok(_) => {} // the server sends nothing; ignore it if it does
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                return (
                    End::Error,
                    None,
                    Some(format!("waiting for the server's EOF: {e}")),
                )
            }
        }
    }
}

/// How the transfer went (the final line's own keys).
struct Outcome<'a> {
    end: End,
    /// When the server's EOF arrived (sized transfers only).
    completed: Option<Instant>,
    samples: u64,
    error: Option<&'a str>,
}

/// The final line's object.
fn final_json(probe: Option<&Probe>, mptcp_socket: bool, start: Instant, o: Outcome) -> Value {
    let fd = probe.map(|p| p.fd);
    let mut m = Map::new();
    m.insert("final".into(), json!(true));
    m.insert(
        "fct_s".into(),
        json!(o
            .completed
            .map(|t| round_us(t.duration_since(start).as_secs_f64()))),
    );
    let (info, mp) = match probe.and_then(measure) {
        Some((s, mp)) => (Some(s), mp),
        None => (None, None),
    };
    let subflows = mptcp_socket.then(|| {
        probe
            .map(|p| p.seen.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    });
    let bytes_acked = info.as_ref().and_then(|s| s.bytes_acked);
    m.insert("bytes_acked".into(), json!(bytes_acked.unwrap_or(0)));
    m.insert(
        "bytes_sent".into(),
        json!(info.as_ref().and_then(|s| s.bytes_sent)),
    );
    m.insert(
        "retrans_segs".into(),
        json!(info.as_ref().map(|s| s.retrans_segs)),
    );
    m.insert(
        "cc".into(),
        json!(fd.and_then(|fd| socket::congestion_control(fd).ok())),
    );
    m.insert(
        "elapsed_s".into(),
        json!(round_us(start.elapsed().as_secs_f64())),
    );
    m.insert("end".into(), json!(o.end.name()));
    m.insert("samples".into(), json!(o.samples));
    if mptcp_socket {
        let retrans = mp.and_then(|r| r.data_retrans_bytes);
        m.insert("data_retrans_bytes".into(), json!(retrans));
    }
    if let Some(sf) = subflows {
        m.insert(
            "subflows".into(),
            Value::Array(sf.iter().map(mptcp::Subflow::to_json).collect()),
        );
    }
    if let Some(e) = o.error {
        m.insert("error".into(), json!(e));
    }
    Value::Object(m)
}

fn write_line(out: &mut BufWriter<File>, v: &Value) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(b"\n")
}

/// Runs the client; returns the exit status (0, or 1 when the transfer failed).
pub fn run(args: &ClientArgs) -> Result<i32, TrafficError> {
    socket::check_congestion_control(&args.cc)?;
    let file = File::create(&args.out).map_err(|e| {
        TrafficError::usage(format!("--out {}: cannot create: {e}", args.out.display()))
    })?;
    let mut out = BufWriter::with_capacity(OUT_BUF_BYTES, file);
    signals::install().map_err(|e| TrafficError::runtime(format!("sigaction: {e}")))?;

    let start = Instant::now();
    let opts = socket::ConnectOptions {
        cc: &args.cc,
        mptcp: args.mptcp,
        bind_dev: args.bind_dev.as_deref(),
    };
    let mut stream = match socket::connect(&args.connect, &opts) {
        Ok(s) => s,
        Err(e) if e.exit_code == 1 && signals::stop_requested() => {
            // Stopped while connecting: an empty but well-formed result.
            let v = final_json(
                None,
                args.mptcp,
                start,
                Outcome {
                    end: End::Signal,
                    completed: None,
                    samples: 0,
                    error: None,
                },
            );
            write_line(&mut out, &v)
                .and_then(|()| out.flush())
                .map_err(|e| out_error(args, e))?;
            return Ok(0);
        }
        Err(e) => {
            let v = final_json(
                None,
                args.mptcp,
                start,
                Outcome {
                    end: End::Error,
                    completed: None,
                    samples: 0,
                    error: Some(&e.message),
                },
            );
            let _ = write_line(&mut out, &v).and_then(|()| out.flush());
            return Err(e);
        }
    };
    for r in [
        stream.set_write_timeout(Some(POLL_TIMEOUT)),
        stream.set_read_timeout(Some(POLL_TIMEOUT)),
    ] {
        r.map_err(|e| TrafficError::runtime(format!("setting socket timeouts: {e}")))?;
    }
    let fd = stream.as_raw_fd();
    let done = AtomicBool::new(false);
    let written = AtomicU64::new(0);
    let probe = Probe {
        fd,
        mptcp: args.mptcp,
        written: &written,
        seen: Mutex::new(Vec::new()),
    };
    let (end, completed, error, sampled) = std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            sample_loop(
                &probe,
                start,
                args.sample_interval,
                &args.switches,
                &done,
                out,
            )
        });
        let (end, completed, error) = transfer(&mut stream, args.amount, start, &written);
        done.store(true, Ordering::SeqCst);
        let sampled = sampler.join().expect("the sampler thread does not panic");
        (end, completed, error, sampled)
    });
    let Sampled {
        mut out,
        count: samples,
        write_error,
        switched,
        switch_error,
    } = sampled;
    if let Some(e) = write_error {
        return Err(out_error(args, e));
    }
    let error = error.or(switch_error);
    let mut v = final_json(
        Some(&probe),
        args.mptcp,
        start,
        Outcome {
            end,
            completed,
            samples,
            error: error.as_deref(),
        },
    );
    if !args.switches.is_empty() {
        v["switches"] = Value::Array(
            switched
                .iter()
                .map(|a| json!({"t_s": a.t_s, "cc": a.cc, "cwnd_pkts": a.cwnd}))
                .collect(),
        );
    }
    write_line(&mut out, &v)
        .and_then(|()| out.flush())
        .map_err(|e| out_error(args, e))?;
    drop(stream);
    match error {
        Some(e) => Err(TrafficError::runtime(e)),
        None => Ok(0),
    }
}

fn out_error(args: &ClientArgs, e: std::io::Error) -> TrafficError {
    TrafficError::runtime(format!("--out {}: write failed: {e}", args.out.display()))
}

#[cfg(test)]
mod tests {
    use super::data_bytes_acked;

    #[test]
    fn syn_and_fin_are_not_data() {
        // 10 MB sized transfer, everything acked: the kernel says 10 000 002 (SYN + data + FIN).
        assert_eq!(data_bytes_acked(10_000_002, true, 10_000_000), 10_000_000);
        // Mid-transfer: only the SYN is extra.
        assert_eq!(data_bytes_acked(5_001, true, 8_000), 5_000);
        // Before the handshake completes.
        assert_eq!(data_bytes_acked(0, true, 0), 0);
        // MPTCP data level: no SYN, DATA_FIN clamped.
        assert_eq!(data_bytes_acked(1_001, false, 1_000), 1_000);
    }
}
