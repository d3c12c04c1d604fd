//! Prints the summary of a scenario as JSON: `cargo run --release -p rove-world --example summary -- FILE [KEY=VALUE ...]`.
use rove_world::{load, summarize, ParseOptions};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let text = std::fs::read_to_string(path).expect("read");
    let overrides: Vec<(String, String)> = args[2..]
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("KEY=VALUE");
            (k.to_string(), v.to_string())
        })
        .collect();
    let p = Path::new(path);
    let opts = ParseOptions { source: path, base_dir: p.parent(), overrides: &overrides, ..Default::default() };
    let mut world = load(&text, &opts).unwrap_or_else(|e| panic!("{e}"));
    world.run();
    println!("{}", serde_json::to_string_pretty(&summarize(&world)).unwrap());
}
