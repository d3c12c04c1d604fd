//! A hook recorder: wraps an algorithm and writes, for every `tcp_congestion_ops` hook call, one
//! JSON line with the hook, its arguments, the `tcp_sock` fields before the call and the outputs
//! after it. The eBPF ports' host replay (crates/emu/bpf/host/, docs/kernel-backend.md "Checking
//! the ports' arithmetic") feeds these lines to the port compiled for the host and compares.
//!
//! Recording is switched on per thread with [`record_to`] (a test program or `rove-record`
//! calls it before building the world); [`super::build`] then wraps each algorithm whose name is
//! listed. With recording off, `build` pays one thread-local read per algorithm built and the
//! wrapper does not exist, so normal runs are unchanged.
//!
//! # The line
//!
//! Every value is an integer, in the kernel's units and types, so the replay copies them into a
//! `struct tcp_sock` as they are:
//!
//! - `hook`, `sk` (the socket's index in the file: flows or subflows recorded together, in the
//!   order they were built), `n` (line number).
//! - Arguments: `acked` and `ack` (cong_avoid; `ack` = the new snd_una, which is what
//!   tcp_ack passes), `pkts_acked`/`rtt_us`/`in_flight` (pkts_acked's `struct ack_sample`),
//!   `event` (enum tcp_ca_event), `new_state` (enum tcp_ca_state), `flags` (in_ack_event), and
//!   for cong_control the `struct rate_sample` fields as `rs_*`.
//! - Before the call: `now_ns` (the clock of bpf_ktime_get_ns), `tcp_mstamp` (µs), `jiffies`
//!   (tcp_jiffies32 at HZ = [`crate::kernel::HZ`]), `lsndtime` (jiffies), `snd_cwnd`,
//!   `ssthresh`, `cnt` (snd_cwnd_cnt), `clamp`, `snd_una`/`snd_nxt`/`high_seq` (bytes: segments ·
//!   mss truncated to u32, as the kernel's sequence space), `srtt_us` (scaled by 8 as the
//!   kernel's), `mdev_us` (scaled by 4), `packets_out`, `sacked_out`, `lost_out`,
//!   `retrans_out`, `delivered`, `lost`, `is_cwnd_limited`, `max_packets_out`, `pacing_rate` (bytes/s, sk_pacing_rate),
//!   `pacing_needed` (sk_pacing_status != SK_PACING_NONE), `mss`,
//!   `ca_state`, `prior_cwnd`, `prior_ssthresh`, `app_limited`, `min_rtt_us` (tcp_min_rtt, ~0
//!   before a sample), `delivered_mstamp` (µs), `wstamp_ns` (tcp_wstamp_ns, the next
//!   departure under pacing).
//! - After: `out_cwnd`, `out_ssthresh`, `out_cnt`, `out_pacing_rate`, `ret` (ssthresh and
//!   undo_cwnd's return value, else 0) and `enter_cwr` (the algorithm asked the sender for
//!   tcp_enter_cwr).
//!
//! [GAP] Jiffies are recorded at the kernel profile's HZ (250, as the running kernel's and the
//! replay's CONFIG_HZ); a run whose algorithm sets another `hz` in `cc_params` records jiffies
//! its ports would not see, and is not a replay input.
//!
//! A first line per socket, `hook = "prandom"`, lists the first values of the algorithm's own
//! random stream (`values`), for algorithms that draw (`get_random_u32`): the replay's
//! bpf_get_prandom_u32 returns them in order, so a port that draws at the same moments draws the
//! same numbers. [GAP] The stream is the simulator's per-flow ChaCha8 one ([`RANDOM_STREAMS`]),
//! [`PRANDOM_VALUES`] values of it: the high 32 bits of each u64 drawn, which is what a port's
//! `(u64)r * n >> 32` needs to equal the simulator's `uniform() * n` (a uniform f64 is the top
//! 53 bits of one u64; the two differ only when u·n is less than n/2^32 above an integer).
//!
//! A socket of an algorithm that takes per-flow parameters on the kernel (bbr2plus) and has
//! `cc_params` gets a line `hook = "params"` with the values the kernel backend would write
//! into the port's parameter map (`crate::cc::bbr2plus_kernel_params`), which the replay
//! writes into the port's map for that socket.

use super::CongestionControl;
use crate::state::{AckSample, CaEvent, CaState, RateSample, TcpState, TxRecord};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Algorithms that draw random numbers, and the label of their stream (`rove_sim::rng::Stream`):
/// CDG's backoff (cc/cdg.rs, `Stream::new(seed, "cdg")`), BBRv2's and BBRv2+'s probe waits
/// (cc/bbr2/mod.rs, `Stream::new(seed, "bbr2")` for both).
pub const RANDOM_STREAMS: &[(&str, &str)] =
    &[("cdg", "cdg"), ("bbr2", "bbr2"), ("bbr2plus", "bbr2")];

/// How many values of a random stream the `prandom` line lists (CDG draws at most once per RTT).
pub const PRANDOM_VALUES: usize = 20_000;

/// A trace file, shared by every socket of one algorithm.
type Sink = Arc<Mutex<BufWriter<File>>>;

struct Session {
    dir: PathBuf,
    names: Vec<String>,
    /// One file per algorithm name, and the next socket index in it.
    files: Vec<(String, Sink, u32)>,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// Records every algorithm named in `names` built on this thread from now on, into
/// `dir/NAME.jsonl` (created or truncated).
pub fn record_to(dir: &Path, names: &[&str]) {
    SESSION.with(|s| {
        *s.borrow_mut() = Some(Session {
            dir: dir.to_path_buf(),
            names: names.iter().map(|n| n.to_string()).collect(),
            files: Vec::new(),
        })
    });
}

/// Stops recording on this thread and flushes the files.
pub fn stop_recording() {
    SESSION.with(|s| {
        if let Some(session) = s.borrow_mut().take() {
            for (_, file, _) in session.files {
                let _ = file.lock().unwrap().flush();
            }
        }
    });
}

/// Called by [`super::build`]: `algo` itself, or wrapped in a [`Recorder`] when this thread
/// records algorithm `name`.
pub(super) fn wrap(
    name: &str,
    config: &super::CcConfig,
    algo: Box<dyn CongestionControl>,
) -> Box<dyn CongestionControl> {
    let seed = config.seed;
    SESSION.with(|s| {
        let mut guard = s.borrow_mut();
        let Some(session) = guard.as_mut() else {
            return algo;
        };
        if !session.names.iter().any(|n| n == name) {
            return algo;
        }
        let index = match session.files.iter().position(|(n, _, _)| n == name) {
            Some(i) => i,
            None => {
                let path = session.dir.join(format!("{name}.jsonl"));
                let file = File::create(&path)
                    .unwrap_or_else(|e| panic!("{}: cannot create: {e}", path.display()));
                session.files.push((
                    name.to_string(),
                    Arc::new(Mutex::new(BufWriter::new(file))),
                    0,
                ));
                session.files.len() - 1
            }
        };
        let (_, out, next_sk) = &mut session.files[index];
        let sk = *next_sk;
        *next_sk += 1;
        let recorder = Recorder {
            inner: algo,
            out: out.clone(),
            sk,
            lines: 0,
        };
        if let Some((_, label)) = RANDOM_STREAMS.iter().find(|(n, _)| *n == name) {
            let mut stream = rove_sim::rng::Stream::new(seed, label);
            let mut line = format!("{{\"hook\":\"prandom\",\"sk\":{sk},\"values\":[");
            for i in 0..PRANDOM_VALUES {
                // cdg.rs random_u32: the high 32 bits of the next u64.
                let v = (stream.next_u64() >> 32) as u32;
                let _ = write!(line, "{}{v}", if i > 0 { "," } else { "" });
            }
            line.push_str("]}\n");
            let _ = recorder.out.lock().unwrap().write_all(line.as_bytes());
        }
        if let Some(values) = kernel_params(name, config.params) {
            let list: Vec<String> = values.iter().map(u32::to_string).collect();
            let line = format!(
                "{{\"hook\":\"params\",\"sk\":{sk},\"values\":[{}]}}\n",
                list.join(",")
            );
            let _ = recorder.out.lock().unwrap().write_all(line.as_bytes());
        }
        Box::new(recorder)
    })
}

/// The values the kernel backend writes into the eBPF port's parameter map for a flow of
/// `name` with `params` (crates/emu/src/bpf_params.rs): bbr2plus with cc_params only.
fn kernel_params(name: &str, params: &toml::Table) -> Option<Vec<u32>> {
    if name != "bbr2plus" || params.is_empty() {
        return None;
    }
    super::bbr2plus_kernel_params(params).ok()
}

/// enum tcp_ca_state (include/uapi/linux/tcp.h).
fn ca_state_num(s: CaState) -> u32 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

/// enum tcp_ca_event (include/net/tcp.h).
fn ca_event_num(e: CaEvent) -> u32 {
    match e {
        CaEvent::TxStart => 0,
        CaEvent::CwndRestart => 1,
        CaEvent::CompleteCwr => 2,
        CaEvent::Loss => 3,
    }
}

/// A sequence number in segments as the kernel's byte sequence space (u32, from 0).
fn seq_bytes(seg: u64, mss: u32) -> u32 {
    seg.wrapping_mul(mss as u64) as u32
}

/// The wrapper: forwards every hook and records it.
pub struct Recorder {
    inner: Box<dyn CongestionControl>,
    out: Sink,
    sk: u32,
    lines: u64,
}

impl Recorder {
    /// The line's head, arguments and BEFORE snapshot (`args` is `"key":value,` pairs).
    fn before(&mut self, hook: &str, args: &str, tp: &TcpState) -> String {
        let mut s = String::with_capacity(640);
        let mss = tp.mss_cache;
        let _ = write!(
            s,
            "{{\"n\":{},\"sk\":{},\"hook\":\"{hook}\",{args}\"now_ns\":{},\"tcp_mstamp\":{},\
             \"jiffies\":{},\"lsndtime\":{},\"snd_cwnd\":{},\"ssthresh\":{},\"cnt\":{},\
             \"clamp\":{},\"snd_una\":{},\"snd_nxt\":{},\"high_seq\":{},\"srtt_us\":{},\
             \"mdev_us\":{},\"packets_out\":{},\"sacked_out\":{},\"lost_out\":{},\
             \"retrans_out\":{},\"delivered\":{},\"lost\":{},\"is_cwnd_limited\":{},\
             \"max_packets_out\":{},\"pacing_rate\":{},\"pacing_needed\":{},\"mss\":{mss},\"ca_state\":{},\"prior_cwnd\":{},\
             \"prior_ssthresh\":{},\"app_limited\":{},\"min_rtt_us\":{},\"delivered_mstamp\":{},\
             \"wstamp_ns\":{},",
            self.lines,
            self.sk,
            tp.now,
            tp.now / 1000,
            crate::kernel::jiffies(tp.now),
            crate::kernel::jiffies(tp.lsndtime),
            tp.snd_cwnd,
            tp.snd_ssthresh,
            tp.snd_cwnd_cnt,
            tp.snd_cwnd_clamp,
            seq_bytes(tp.snd_una, mss),
            seq_bytes(tp.snd_nxt, mss),
            seq_bytes(tp.high_seq, mss),
            (tp.srtt_us << 3) as u32,
            tp.mdev_us4 as u32,
            tp.packets_out,
            tp.sacked_out,
            tp.lost_out,
            tp.retrans_out,
            tp.delivered as u32,
            tp.lost as u32,
            tp.is_cwnd_limited as u32,
            tp.max_packets_out,
            tp.pacing_rate,
            tp.pacing_needed as u32,
            ca_state_num(tp.ca_state),
            tp.prior_cwnd,
            tp.prior_ssthresh,
            tp.app_limited as u32,
            tp.min_rtt_us.min(u32::MAX as u64),
            tp.delivered_mstamp / 1000,
            tp.tcp_wstamp_ns,
        );
        self.lines += 1;
        s
    }

    /// Completes the line with the AFTER fields and writes it.
    fn after(&self, mut line: String, tp: &TcpState, ret: u32) {
        let _ = writeln!(
            line,
            "\"out_cwnd\":{},\"out_ssthresh\":{},\"out_cnt\":{},\"out_pacing_rate\":{},\
             \"ret\":{ret},\"enter_cwr\":{}}}",
            tp.snd_cwnd, tp.snd_ssthresh, tp.snd_cwnd_cnt, tp.pacing_rate, tp.enter_cwr as u32
        );
        let _ = self.out.lock().unwrap().write_all(line.as_bytes());
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.out.lock().unwrap().flush();
    }
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn init(&mut self, tp: &mut TcpState) {
        let line = self.before("init", "", tp);
        self.inner.init(tp);
        self.after(line, tp, 0);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let line = self.before("ssthresh", "", tp);
        let ret = self.inner.ssthresh(tp);
        self.after(line, tp, ret);
        ret
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        let args = format!(
            "\"acked\":{acked},\"ack\":{},",
            seq_bytes(tp.snd_una, tp.mss_cache)
        );
        let line = self.before("cong_avoid", &args, tp);
        self.inner.cong_avoid(tp, acked);
        self.after(line, tp, 0);
    }

    fn has_cong_control(&self) -> bool {
        self.inner.has_cong_control()
    }

    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let args = format!(
            "\"ack\":{},\"rs_prior_delivered\":{},\"rs_prior_mstamp\":{},\"rs_delivered\":{},\
             \"rs_interval_us\":{},\"rs_snd_interval_us\":{},\"rs_rcv_interval_us\":{},\
             \"rs_rtt_us\":{},\"rs_acked_sacked\":{},\"rs_losses\":{},\"rs_prior_in_flight\":{},\
             \"rs_is_app_limited\":{},\"rs_is_retrans\":{},\"rs_tx_in_flight\":{},\
             \"rs_prior_lost\":{},\"rs_lost\":{},",
            seq_bytes(tp.snd_una, tp.mss_cache),
            rs.prior_delivered as u32,
            rs.prior_mstamp / 1000,
            rs.delivered,
            // The kernel's rate_sample keeps intervals in µs (negative: invalid).
            us_signed(rs.interval_ns),
            us_signed(rs.snd_interval_ns),
            us_signed(rs.rcv_interval_ns),
            us_signed(rs.rtt_ns),
            rs.acked_sacked,
            rs.losses,
            rs.prior_in_flight,
            rs.is_app_limited as u32,
            rs.is_retrans as u32,
            rs.tx_in_flight,
            rs.prior_lost as u32,
            rs.lost as u32,
        );
        let line = self.before("cong_control", &args, tp);
        self.inner.cong_control(tp, rs);
        self.after(line, tp, 0);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        let args = format!("\"new_state\":{},", ca_state_num(new_state));
        let line = self.before("set_state", &args, tp);
        self.inner.set_state(tp, new_state);
        self.after(line, tp, 0);
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        let args = format!("\"event\":{},", ca_event_num(event));
        let line = self.before("cwnd_event", &args, tp);
        self.inner.cwnd_event(tp, event);
        self.after(line, tp, 0);
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let args = format!(
            "\"pkts_acked\":{},\"rtt_us\":{},\"in_flight\":{},",
            sample.pkts_acked,
            // struct ack_sample's rtt_us is s32.
            sample.rtt_us.clamp(i32::MIN as i64, i32::MAX as i64),
            sample.in_flight
        );
        let line = self.before("pkts_acked", &args, tp);
        self.inner.pkts_acked(tp, sample);
        self.after(line, tp, 0);
    }

    fn in_ack_event(&mut self, tp: &mut TcpState, flags: u32) {
        let args = format!("\"flags\":{flags},");
        let line = self.before("in_ack_event", &args, tp);
        self.inner.in_ack_event(tp, flags);
        self.after(line, tp, 0);
    }

    fn release(&mut self, tp: &mut TcpState) {
        let line = self.before("release", "", tp);
        self.inner.release(tp);
        self.after(line, tp, 0);
    }

    fn on_segment_sent(&mut self, tp: &TcpState, seq: u64, bytes: u32, retrans: bool) {
        self.inner.on_segment_sent(tp, seq, bytes, retrans);
    }

    fn skb_marked_lost(&mut self, tp: &mut TcpState, tx: &TxRecord) {
        let args = format!(
            "\"tx_delivered\":{},\"tx_lost\":{},\"tx_in_flight\":{},\"tx_is_app_limited\":{},",
            tx.delivered as u32, tx.lost as u32, tx.in_flight, tx.is_app_limited as u32
        );
        let line = self.before("skb_marked_lost", &args, tp);
        self.inner.skb_marked_lost(tp, tx);
        self.after(line, tp, 0);
    }

    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        let line = self.before("undo_cwnd", "", tp);
        let ret = self.inner.undo_cwnd(tp);
        self.after(line, tp, ret);
        ret
    }

    fn path_model(&self, tp: &TcpState) -> Option<super::PathModel> {
        self.inner.path_model(tp)
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        self.inner.telemetry_names()
    }

    fn telemetry(&self, tp: &TcpState, out: &mut [f64]) {
        self.inner.telemetry(tp, out)
    }

    fn mode(&self, tp: &TcpState) -> &'static str {
        self.inner.mode(tp)
    }
}

/// A signed nanosecond interval in µs, as the kernel's `long` µs fields (negative stays -1).
fn us_signed(ns: i64) -> i64 {
    if ns < 0 {
        -1
    } else {
        ns / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_are_bytes_modulo_2_32() {
        assert_eq!(seq_bytes(3, 1448), 4344);
        // 2^32 / 1448 = 2966137.3...: segment 2966138 wraps to 2966138·1448 − 2^32 = 528.
        assert_eq!(seq_bytes(2_966_138, 1448), 528);
    }

    /// A recorded Reno cong_avoid in slow start: cwnd 10 -> 12 on 2 packets acked, ssthresh
    /// unchanged; one line with the before and after fields, sequence numbers in bytes.
    #[test]
    fn a_recorded_line_holds_arguments_before_and_after() {
        let dir = std::env::temp_dir().join(format!("rove-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        record_to(&dir, &["reno"]);
        let params = toml::Table::new();
        let mut cc = crate::cc::build("reno", &crate::cc::CcConfig::new(&params, 1))
            .unwrap()
            .unwrap();
        let mut tp = TcpState {
            snd_una: 5,
            snd_nxt: 15,
            max_packets_out: 10,
            is_cwnd_limited: true,
            now: 300_000_000_000,
            ..Default::default()
        };
        cc.cong_avoid(&mut tp, 2);
        drop(cc);
        stop_recording();
        let text = std::fs::read_to_string(dir.join("reno.jsonl")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let line = text.lines().next().unwrap();
        for field in [
            "\"hook\":\"cong_avoid\"",
            "\"acked\":2,",
            "\"ack\":7240,", // 5 segments of 1448 bytes
            "\"snd_nxt\":21720,",
            "\"jiffies\":0,", // 300 s: INITIAL_JIFFIES has wrapped to 0
            "\"snd_cwnd\":10,",
            "\"out_cwnd\":12,",
            "\"out_ssthresh\":2147483647,",
            "\"wstamp_ns\":0,",
            "\"out_pacing_rate\":0,",
        ] {
            assert!(line.contains(field), "{field} not in {line}");
        }
        // Not recording: build returns the algorithm itself.
        assert_eq!(text.lines().count(), 1);
    }

    /// A bbr2plus socket with cc_params starts with its random stream and the values the
    /// kernel backend would write into the port's parameter map.
    #[test]
    fn a_bbr2plus_socket_with_cc_params_records_its_kernel_parameters() {
        let dir = std::env::temp_dir().join(format!("rove-record-p-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        record_to(&dir, &["bbr2plus"]);
        let params: toml::Table = toml::from_str("variant = \"code\"").unwrap();
        let cc = crate::cc::build("bbr2plus", &crate::cc::CcConfig::new(&params, 1))
            .unwrap()
            .unwrap();
        drop(cc);
        stop_recording();
        let text = std::fs::read_to_string(dir.join("bbr2plus.jsonl")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("{\"hook\":\"prandom\",\"sk\":0,\"values\":["));
        let want: Vec<String> = crate::cc::bbr2plus_kernel_params(&params)
            .unwrap()
            .iter()
            .map(u32::to_string)
            .collect();
        assert_eq!(
            lines[1],
            format!(
                "{{\"hook\":\"params\",\"sk\":0,\"values\":[{}]}}",
                want.join(",")
            )
        );
    }

    #[test]
    fn linux_enum_numbers() {
        assert_eq!(ca_state_num(CaState::Loss), 4); // TCP_CA_Loss
        assert_eq!(ca_state_num(CaState::Cwr), 2); // TCP_CA_CWR
        assert_eq!(ca_event_num(CaEvent::CompleteCwr), 2); // CA_EVENT_COMPLETE_CWR
        assert_eq!(ca_event_num(CaEvent::Loss), 3); // CA_EVENT_LOSS
    }
}
