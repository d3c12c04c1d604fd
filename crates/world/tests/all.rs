//! rove-world's scenario tests, one module per subject, built as one test binary: each test file
//! linked on its own (33 binaries, each a thin-LTO link of the whole engine) cost CI minutes.
//! Run one subject with `cargo test --release -p rove-world --test all tsc::` (a name filter).

mod common;

mod bbr;
mod bbr2;
mod bbr2plus;
mod bbr3;
mod bccps;
mod control;
mod coupled;
mod cubic;
mod detection;
mod hystart;
mod lte;
mod memory;
mod mpbbr;
mod multipath;
mod oal;
mod pcap;
mod queues;
mod request_workload;
mod rtsc;
mod scenarios;
mod selection;
mod spc;
mod sscc;
mod sscc_select;
mod tsc;
mod video_workload;
mod wifi;
mod wifi_driveby;
mod wifi_mobility;
mod wifi_multiap;
mod wifi_phy;
mod wifi_queues;
mod window;
mod workloads;
mod zoo;
mod zoo2;
mod zoo3;
mod zoo4;
