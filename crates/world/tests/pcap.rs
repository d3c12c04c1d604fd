//! Packet captures (`World::add_capture`, crates/world/src/pcap.rs): read back, a capture has
//! one record per packet that crossed the link, in time order, with the sizes the link
//! carried and headers that decode.

use crate::common;

use rove_world::{summarize, World};

fn world(toml: &str) -> World {
    common::world(toml)
}

struct Record {
    t_ns: u64,
    caplen: usize,
    orig: u32,
    data: Vec<u8>,
}

fn read(path: &std::path::Path) -> Vec<Record> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(
        u32::from_le_bytes(b[0..4].try_into().unwrap()),
        0xa1b2_3c4d,
        "nanosecond pcap"
    );
    assert_eq!(
        u32::from_le_bytes(b[20..24].try_into().unwrap()),
        101,
        "raw IP"
    );
    let mut out = Vec::new();
    let mut i = 24;
    while i < b.len() {
        let u = |k: usize| u32::from_le_bytes(b[i + k..i + k + 4].try_into().unwrap());
        let (s, ns, caplen, orig) = (u(0), u(4), u(8) as usize, u(12));
        out.push(Record {
            t_ns: u64::from(s) * 1_000_000_000 + u64::from(ns),
            caplen,
            orig,
            data: b[i + 16..i + 16 + caplen].to_vec(),
        });
        i += 16 + caplen;
    }
    out
}

#[test]
fn a_capture_holds_every_packet_that_crossed_the_link() {
    // 300 kB over 20 Mbit/s: finished long before the end, so nothing is in flight at the end
    // and every byte the link sent is in the capture.
    let mut w = world(
        &common::bottleneck(
            "3s",
            "",
            "rate = \"20Mbps\"\ndelay = \"10ms\"\nbuffer = \"20pkt\"",
            &[("f", "cubic", "")],
        )
        .replace("cc = \"cubic\"", "cc = \"cubic\"\nsize = \"300KB\""),
    );
    let dir = std::env::temp_dir().join(format!("rove-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (down, up) = (dir.join("down.pcap"), dir.join("up.pcap"));
    w.add_capture("down", &down).unwrap();
    w.add_capture("up", &up).unwrap();
    assert!(w
        .add_capture("nope", &dir.join("x"))
        .unwrap_err()
        .contains("accepted: down, up"));
    w.run();
    let s = summarize(&w);
    assert_eq!(s.flows[0].completed, Some(true));
    let counts = w.finish_captures().unwrap();
    let (d, u) = (read(&down), read(&up));
    assert_eq!(
        counts,
        vec![
            ("down".to_string(), d.len() as u64),
            ("up".to_string(), u.len() as u64)
        ]
    );
    let departed = |name: &str| {
        w.links
            .iter()
            .find(|l| l.name() == name)
            .unwrap()
            .stats()
            .departed_bytes
    };
    assert_eq!(
        d.iter().map(|r| u64::from(r.orig)).sum::<u64>(),
        departed("down")
    );
    assert_eq!(
        u.iter().map(|r| u64::from(r.orig)).sum::<u64>(),
        departed("up")
    );
    assert!(d.windows(2).all(|p| p[0].t_ns <= p[1].t_ns), "time order");
    // The first record is the SYN, seen 10 ms (the link's delay) + 60 B at 20 Mbit/s after 0.
    let syn = &d[0];
    assert_eq!((syn.caplen, syn.orig), (60, 60));
    assert_eq!(syn.t_ns, 10_000_000 + 24_000);
    assert_eq!(syn.data[33] & 0x02, 0x02, "SYN flag");
    // Every data segment: IPv4 total length = the record's original length; sequence numbers
    // cover 300 000 bytes from ISN 1000 + 1.
    let mut top = 0u32;
    for r in &d[1..] {
        assert_eq!(u16::from_be_bytes([r.data[2], r.data[3]]) as u32, r.orig);
        let seq = u32::from_be_bytes(r.data[24..28].try_into().unwrap());
        let hdr = (r.data[32] >> 4) as u32 * 4;
        top = top.max(seq + r.orig - 20 - hdr);
    }
    assert_eq!(top, 1001 + 300_000);
    let _ = std::fs::remove_dir_all(&dir);
}
