//! `rove-traffic`: real TCP/MPTCP flows with TCP_INFO sampling (see `rove_emu::traffic`).

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let code = match rove_emu::traffic::main_with_args(&argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "rove-traffic: error: {}",
                e.message.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            e.exit_code
        }
    };
    std::process::exit(code);
}
