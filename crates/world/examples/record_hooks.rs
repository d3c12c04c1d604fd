//! Runs a scenario with the congestion-control hook recorder on (rove_tcp::cc::record), writing
//! `OUT_DIR/NAME.jsonl` for each algorithm NAME listed, every flow or subflow running it one
//! socket `sk` of the file: `cargo run --release -p rove-world --example record_hooks --
//! SCENARIO OUT_DIR NAME[,NAME...]`. The eBPF ports' host replay (crates/emu/bpf/host/) reads
//! the files; tests/test_bpf_replay.py drives both.
use rove_tcp::cc::record;
use rove_world::load_file;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: record_hooks SCENARIO OUT_DIR NAME[,NAME...]");
        std::process::exit(2);
    }
    let (path, out_dir) = (&args[1], Path::new(&args[2]));
    let names: Vec<&str> = args[3].split(',').collect();
    std::fs::create_dir_all(out_dir).expect("create OUT_DIR");
    record::record_to(out_dir, &names);
    let mut world = load_file(Path::new(path), &[]).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    world.run();
    drop(world);
    record::stop_recording();
}
