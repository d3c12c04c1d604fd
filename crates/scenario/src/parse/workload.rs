//! A flow's `workload` and the keys each workload takes (docs/scenario-format.md#workloads).
//!
//! [`WORKLOADS`] is the one registry: every workload's name and its own keys. A key of another
//! workload is rejected with the workloads it belongs to; an unknown key with the accepted list.

use super::*;
use crate::spec::{RequestSpec, ResponseSizes, ThinkTime, VideoSpec};
use crate::NS_PER_S;

/// Every workload and the flow keys that belong to it alone.
pub const WORKLOADS: &[(&str, &[&str])] = &[
    ("bulk", &[]),
    ("cbr", UNRESPONSIVE_KEYS),
    ("poisson", UNRESPONSIVE_KEYS),
    ("onoff", &["rate", "packet_size", "on", "off"]),
    (
        "video",
        &[
            "fps",
            "bitrate",
            "gop",
            "i_to_p",
            "b_frames",
            "b_to_p",
            "scene_spread",
            "scene",
            "frame_jitter",
            "deadline",
            "required_delay",
        ],
    ),
    (
        "requests",
        &[
            "sizes",
            "size_order",
            "size_dist",
            "size_median",
            "size_sigma",
            "size_min",
            "size_alpha",
            "size_max",
            "think",
            "think_dist",
            "requests",
        ],
    ),
];
const UNRESPONSIVE_KEYS: &[&str] = &["rate", "packet_size"];

/// Workload names, in registry order.
pub fn workload_names() -> Vec<&'static str> {
    WORKLOADS.iter().map(|(name, _)| *name).collect()
}

/// Every key some workload takes (for the flow's accepted keys).
pub(super) fn workload_keys() -> impl Iterator<Item = &'static str> {
    let mut seen: Vec<&str> = Vec::new();
    WORKLOADS
        .iter()
        .flat_map(|(_, keys)| keys.iter().copied())
        .filter(move |k| {
            let new = !seen.contains(k);
            if new {
                seen.push(k);
            }
            new
        })
}

/// Default `packet_size` of an unresponsive source: a full 1500-byte IP packet. [GAP] a choice.
pub const DEFAULT_PACKET_BYTES: u64 = 1500;
/// Video defaults. seed 003 uses H.264 VBR traces (Seeling & Reisslein) without giving their
/// frame rate, GOP, I/P ratio or deadline: each is a [GAP] and a key.
/// 30 frames/s: the frame rate of the common CIF/HD test sequences. [GAP]
pub const DEFAULT_FPS: f64 = 30.0;
/// An I-frame every 12 frames: an MPEG/H.264 broadcast GOP of about 0.4 s at 30 frames/s. [GAP]
pub const DEFAULT_GOP: u32 = 12;
/// I-frames 5 times the size of P-frames. [GAP] a typical ratio for H.264 at moderate rates.
pub const DEFAULT_I_TO_P: f64 = 5.0;
/// B-frames 0.5 times the size of P-frames when `b_frames` asks for them. [GAP] H.264 B-frames
/// are predicted from two anchors and typically half a P-frame or less.
pub const DEFAULT_B_TO_P: f64 = 0.5;
/// A scene of 5 s when `scene_spread` varies the rate per scene. [GAP] seed 003's traces
/// (Seeling & Reisslein) vary their rate scene by scene; the scene lengths are not given.
pub const DEFAULT_SCENE_NS: Nanos = 5 * NS_PER_S;
/// 150 ms per frame: ITU-T G.114's one-way delay bound for interactive media. [GAP]
pub const DEFAULT_DEADLINE_NS: Nanos = 150 * NS_PER_MS;
/// Think time of a request loop when `think` is absent: none (the next request leaves as the
/// response completes). [GAP] seed 002's short-flow experiment waits 0.1 s; give it as a key.
pub const DEFAULT_THINK_NS: Nanos = 0;

impl Validator<'_> {
    /// Key `workload` (default "bulk"), after rejecting keys that belong to other workloads.
    pub(super) fn workload(&self, t: &Table, path: &str) -> Res<Workload> {
        let name = self
            .get(t, path, "workload", read_string)?
            .unwrap_or_else(|| "bulk".to_string());
        let Some((name, own_keys)) = WORKLOADS.iter().find(|(n, _)| *n == name) else {
            return Err(self.err(
                join(path, "workload"),
                format!(
                    "unknown workload {name:?}; accepted: {}",
                    workload_names().join(", ")
                ),
            ));
        };
        if let Some(key) = workload_keys().find(|k| t.contains_key(*k) && !own_keys.contains(k)) {
            let owners: Vec<String> = WORKLOADS
                .iter()
                .filter(|(_, keys)| keys.contains(&key))
                .map(|(n, _)| format!("{n:?}"))
                .collect();
            return Err(self.err(
                join(path, key),
                format!(
                    "{key:?} belongs to workload = {}, not {name:?}",
                    or_list(&owners)
                ),
            ));
        }
        Ok(match *name {
            "bulk" => Workload::Bulk,
            "cbr" => self.unresponsive(t, path, Process::Cbr)?,
            "poisson" => self.unresponsive(t, path, Process::Poisson)?,
            "onoff" => {
                let on_ns = self.require(t, path, "on", read_time, r#"a time like "1s""#)?;
                let off_ns = self.require(t, path, "off", read_time, r#"a time like "1s""#)?;
                self.positive(on_ns, || join(path, "on"))?;
                self.unresponsive(t, path, Process::OnOff { on_ns, off_ns })?
            }
            "video" => Workload::Video(self.video(t, path)?),
            "requests" => Workload::Requests(self.requests(t, path)?),
            other => unreachable!("workload {other} is in the registry but not parsed"),
        })
    }

    /// An unresponsive source's `rate` and `packet_size`.
    fn unresponsive(&self, t: &Table, path: &str, process: Process) -> Res<Workload> {
        let rate_bps = self.require(t, path, "rate", read_rate, r#"a rate like "10Mbps""#)?;
        self.positive(rate_bps, || join(path, "rate"))?;
        let packet_bytes = self
            .get(t, path, "packet_size", read_size)?
            .unwrap_or(DEFAULT_PACKET_BYTES);
        if !(29..=65_535).contains(&packet_bytes) {
            return Err(self.err(
                join(path, "packet_size"),
                format!("{packet_bytes} B: an IP packet with a UDP header is 29 B to 65535 B"),
            ));
        }
        Ok(Workload::Unresponsive {
            process,
            rate_bps,
            packet_bytes: packet_bytes as u32,
        })
    }

    /// A number at `key` within `range` (a half-open or closed range, said in `accepted`).
    fn number_in(
        &self,
        t: &Table,
        path: &str,
        key: &str,
        ok: impl Fn(f64) -> bool,
        accepted: &str,
    ) -> Res<Option<f64>> {
        match self.get(t, path, key, read_number)? {
            Some(x) if !ok(x) => Err(self.err(
                join(path, key),
                format!("{x} is out of range; accepted: {accepted}"),
            )),
            x => Ok(x),
        }
    }

    fn video(&self, t: &Table, path: &str) -> Res<VideoSpec> {
        let bitrate_bps =
            self.require(t, path, "bitrate", read_rate, r#"a mean rate like "4Mbps""#)?;
        self.positive(bitrate_bps, || join(path, "bitrate"))?;
        let fps = self
            .number_in(
                t,
                path,
                "fps",
                |x| x > 0.0 && x <= 1000.0,
                "0 < fps <= 1000 frames per second",
            )?
            .unwrap_or(DEFAULT_FPS);
        let gop = match self.get(t, path, "gop", read_count)? {
            Some(g) if g > u32::MAX as u64 => return Err(self.err(join(path, "gop"), "too large")),
            Some(g) => g as u32,
            None => DEFAULT_GOP,
        };
        let i_to_p = self
            .number_in(
                t,
                path,
                "i_to_p",
                |x| (1.0..=1000.0).contains(&x),
                "1 to 1000 (an I-frame's size over a P-frame's)",
            )?
            .unwrap_or(DEFAULT_I_TO_P);
        let b_frames = match self.get(t, path, "b_frames", read_count)? {
            Some(b) if b >= gop as u64 => {
                return Err(self.err(
                    join(path, "b_frames"),
                    format!("{b} B-frames between anchors in a GOP of {gop} frames; accepted: 0 <= b_frames < gop"),
                ))
            }
            Some(b) => b as u32,
            None => 0,
        };
        let b_to_p = self
            .number_in(
                t,
                path,
                "b_to_p",
                |x| x > 0.0 && x <= 1000.0,
                "0 < b_to_p <= 1000 (a B-frame's size over a P-frame's)",
            )?
            .unwrap_or(DEFAULT_B_TO_P);
        let scene_spread = self
            .number_in(
                t,
                path,
                "scene_spread",
                |x| (0.0..1.0).contains(&x),
                "0 <= scene_spread < 1 (each scene's sizes scaled uniformly by ± that fraction)",
            )?
            .unwrap_or(0.0);
        let scene_ns = self
            .get(t, path, "scene", read_time)?
            .unwrap_or(DEFAULT_SCENE_NS);
        self.positive(scene_ns, || join(path, "scene"))?;
        let frame_jitter = self
            .number_in(
                t,
                path,
                "frame_jitter",
                |x| (0.0..1.0).contains(&x),
                "0 <= frame_jitter < 1 (sizes scattered uniformly by ± that fraction)",
            )?
            .unwrap_or(0.0);
        let deadline_ns = self
            .get(t, path, "deadline", read_time)?
            .unwrap_or(DEFAULT_DEADLINE_NS);
        self.positive(deadline_ns, || join(path, "deadline"))?;
        let required_delay_ns = self.get(t, path, "required_delay", read_time)?;
        if let Some(d) = required_delay_ns {
            self.positive(d, || join(path, "required_delay"))?;
        }
        let mean_frame_bytes = bitrate_bps as f64 / 8.0 / fps;
        if mean_frame_bytes < 1.0 {
            return Err(self.err(
                join(path, "bitrate"),
                format!("{bitrate_bps} bit/s at {fps} frames/s is less than a byte per frame"),
            ));
        }
        Ok(VideoSpec {
            fps,
            bitrate_bps,
            gop,
            i_to_p,
            b_frames,
            b_to_p,
            scene_spread,
            scene_ns,
            frame_jitter,
            deadline_ns,
            required_delay_ns,
        })
    }

    fn requests(&self, t: &Table, path: &str) -> Res<RequestSpec> {
        if t.contains_key("size") {
            return Err(self.err(
                join(path, "size"),
                "a request loop's sizes are its responses': give sizes = [\"100KB\", ...] or size_dist, and requests = N to stop after N transfers",
            ));
        }
        let sizes = self.response_sizes(t, path)?;
        let mean_ns = self
            .get(t, path, "think", read_time)?
            .unwrap_or(DEFAULT_THINK_NS);
        let think = match self.get(t, path, "think_dist", read_string)?.as_deref() {
            None | Some("fixed") => ThinkTime::Fixed(mean_ns),
            Some("exponential") => ThinkTime::Exponential(mean_ns),
            Some(other) => {
                return Err(self.err(
                    join(path, "think_dist"),
                    format!(
                        "unknown think-time distribution {other:?}; accepted: fixed, exponential"
                    ),
                ))
            }
        };
        Ok(RequestSpec {
            sizes,
            think,
            max_requests: self.get(t, path, "requests", read_count)?,
        })
    }

    /// `sizes = [...]` (with `size_order`) or `size_dist` with its parameters.
    fn response_sizes(&self, t: &Table, path: &str) -> Res<ResponseSizes> {
        let dist = self.get(t, path, "size_dist", read_string)?;
        let dist_keys: &[(&str, &[&str])] = &[
            ("lognormal", &["size_median", "size_sigma"]),
            ("pareto", &["size_min", "size_alpha"]),
        ];
        // Parameters of the other distribution (or of none) are mistakes.
        for (d, keys) in dist_keys {
            if dist.as_deref() == Some(d) {
                continue;
            }
            if let Some(key) = keys.iter().find(|k| t.contains_key(**k)) {
                return Err(self.err(
                    join(path, key),
                    format!("{key:?} belongs to size_dist = {d:?}"),
                ));
            }
        }
        let max_bytes = self.get(t, path, "size_max", read_size)?;
        if let Some(m) = max_bytes {
            self.positive(m, || join(path, "size_max"))?;
        }
        let Some(dist) = dist else {
            if max_bytes.is_some() {
                return Err(self.err(
                    join(path, "size_max"),
                    "caps a size_dist's draws; a sizes list is already bounded",
                ));
            }
            return self.size_list(t, path);
        };
        if t.contains_key("sizes") || t.contains_key("size_order") {
            let key = if t.contains_key("sizes") {
                "sizes"
            } else {
                "size_order"
            };
            return Err(self.err(
                join(path, key),
                "give either a sizes list or a size_dist, not both",
            ));
        }
        let size_at = |key: &str| -> Res<f64> {
            let b = self.require(t, path, key, read_size, r#"a size like "100KB""#)?;
            self.positive(b, || join(path, key))?;
            Ok(b as f64)
        };
        match dist.as_str() {
            "lognormal" => {
                let median_bytes = size_at("size_median")?;
                let sigma = self
                    .number_in(
                        t,
                        path,
                        "size_sigma",
                        |x| (0.0..=10.0).contains(&x),
                        "0 to 10 (the standard deviation of ln size)",
                    )?
                    .ok_or_else(|| {
                        self.err(
                            join(path, "size_sigma"),
                            "missing required key \"size_sigma\" (a number like 1.0)",
                        )
                    })?;
                Ok(ResponseSizes::LogNormal {
                    median_bytes,
                    sigma,
                    max_bytes,
                })
            }
            "pareto" => {
                let min_bytes = size_at("size_min")?;
                let alpha = self
                    .number_in(
                        t,
                        path,
                        "size_alpha",
                        |x| x > 0.0 && x <= 100.0,
                        "0 < size_alpha <= 100 (the tail index)",
                    )?
                    .ok_or_else(|| {
                        self.err(
                            join(path, "size_alpha"),
                            "missing required key \"size_alpha\" (a number like 1.2)",
                        )
                    })?;
                if max_bytes.is_some_and(|m| (m as f64) < min_bytes) {
                    return Err(self.err(join(path, "size_max"), "is below size_min"));
                }
                Ok(ResponseSizes::Pareto {
                    min_bytes,
                    alpha,
                    max_bytes,
                })
            }
            other => Err(self.err(
                join(path, "size_dist"),
                format!("unknown size distribution {other:?}; accepted: lognormal, pareto"),
            )),
        }
    }

    fn size_list(&self, t: &Table, path: &str) -> Res<ResponseSizes> {
        let looks_like = r#"a list of sizes like ["10KB", "100KB", "1MB"]"#;
        let items = match t.get("sizes") {
            None => {
                return Err(self.err(
                    join(path, "sizes"),
                    format!("missing required key \"sizes\" ({looks_like}), or a size_dist"),
                ))
            }
            Some(Value::Array(items)) if !items.is_empty() => items,
            Some(other) => {
                return Err(self.err(
                    join(path, "sizes"),
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        let list_path = join(path, "sizes");
        let mut bytes = Vec::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            let at = index(&list_path, j);
            let b = read_size(item).map_err(|m| self.err(at.clone(), m))?;
            self.positive(b, || at)?;
            bytes.push(b);
        }
        let random = match self.get(t, path, "size_order", read_string)?.as_deref() {
            None | Some("cycle") => false,
            Some("random") => true,
            Some(other) => {
                return Err(self.err(
                    join(path, "size_order"),
                    format!("unknown order {other:?}; accepted: cycle, random"),
                ))
            }
        };
        Ok(ResponseSizes::List { bytes, random })
    }

    /// An unresponsive flow: `path`, `start`, `size` and its workload keys only.
    pub(super) fn unresponsive_flow(
        &self,
        t: &Table,
        path: &str,
        name: String,
        workload: Workload,
        links: &[LinkSpec],
        duration_ns: Nanos,
    ) -> Res<FlowSpec> {
        if let Some(key) = TCP_ONLY_KEYS.iter().find(|k| t.contains_key(**k)) {
            return Err(self.err(
                join(path, key),
                format!("{key:?} belongs to a TCP flow; workload = {:?} is an unresponsive source (no congestion control, no ACKs)", workload.name()),
            ));
        }
        let start_ns = self.flow_start(t, path, duration_ns)?;
        Ok(FlowSpec {
            name,
            cc: workload.name().to_string(),
            cc_params: Table::new(),
            path: self.link_list(t, path, "path", links)?,
            ack_path: Vec::new(),
            start_ns,
            size_bytes: self.get(t, path, "size", read_flow_size)?.flatten(),
            rwnd_bytes: DEFAULT_RWND_BYTES,
            rcv_autotune: false,
            rcv_truesize: DEFAULT_RCV_TRUESIZE,
            multipath: None,
            workload,
            slow_start_after_idle: true,
        })
    }
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
