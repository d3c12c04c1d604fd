//! Command-line parsing for `rove-traffic` (no dependencies; every error is one line, exit 2).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::TrafficError;

pub const USAGE: &str = "\
usage: rove-traffic server --bind IP:PORT [--mptcp]
       rove-traffic client --connect IP:PORT --cc NAME [--bytes N | --duration SECS] [--mptcp]
                           [--sample-ms 10] [--bind-dev IFACE] [--switches AT:CC:HANDOFF,...]
                           --out FILE.jsonl
";

#[derive(Debug, Clone, PartialEq)]
pub struct ServerArgs {
    pub bind: SocketAddr,
    pub mptcp: bool,
}

/// How much a client sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    /// Exactly this many bytes, then wait for the server's EOF.
    Bytes(u64),
    /// Bulk for this long (from the start of connect).
    Duration(Duration),
    /// Bulk until SIGTERM/SIGINT.
    UntilSignal,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClientArgs {
    pub connect: SocketAddr,
    pub cc: String,
    pub amount: Amount,
    pub mptcp: bool,
    pub sample_interval: Duration,
    pub bind_dev: Option<String>,
    /// Live congestion-control switches, in time order (see [`super::handoff`]).
    pub switches: Vec<super::handoff::Switch>,
    pub out: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Server(ServerArgs),
    Client(ClientArgs),
    Help,
}

fn usage_error(msg: String) -> TrafficError {
    TrafficError::usage(format!(
        "{msg} (usage: rove-traffic server|client ..., see --help)"
    ))
}

fn socket_addr(option: &str, text: &str) -> Result<SocketAddr, TrafficError> {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    text.to_socket_addrs()
        .ok()
        .and_then(|mut it| it.next())
        .ok_or_else(|| usage_error(format!("{option}: expected IP:PORT, got {text:?}")))
}

/// The options after the subcommand, as (name, value) pairs; flags get an empty value.
fn options<'a>(
    argv: &'a [String],
    with_value: &[&str],
    flags: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, TrafficError> {
    let mut out = Vec::new();
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (a.as_str(), None),
        };
        if flags.contains(&name) && inline.is_none() {
            out.push((name, ""));
        } else if with_value.contains(&name) {
            let value = match inline {
                Some(v) => v,
                None => it
                    .next()
                    .map(String::as_str)
                    .ok_or_else(|| usage_error(format!("{name}: missing value")))?,
            };
            if out.iter().any(|(n, _)| *n == name) {
                return Err(usage_error(format!("{name}: given twice")));
            }
            out.push((name, value));
        } else {
            let mut accepted: Vec<&str> = with_value.iter().chain(flags).copied().collect();
            accepted.sort_unstable();
            return Err(usage_error(format!(
                "unknown option {a:?} (accepted: {})",
                accepted.join(", ")
            )));
        }
    }
    Ok(out)
}

fn get<'a>(opts: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    opts.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn required<'a>(opts: &[(&str, &'a str)], name: &str) -> Result<&'a str, TrafficError> {
    get(opts, name).ok_or_else(|| usage_error(format!("{name} is required")))
}

pub fn parse(argv: &[String]) -> Result<Command, TrafficError> {
    let Some(cmd) = argv.first() else {
        return Err(usage_error("missing subcommand: server or client".into()));
    };
    let rest = &argv[1..];
    match cmd.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "server" => {
            let opts = options(rest, &["--bind"], &["--mptcp"])?;
            Ok(Command::Server(ServerArgs {
                bind: socket_addr("--bind", required(&opts, "--bind")?)?,
                mptcp: get(&opts, "--mptcp").is_some(),
            }))
        }
        "client" => {
            let opts = options(
                rest,
                &[
                    "--connect",
                    "--cc",
                    "--bytes",
                    "--duration",
                    "--sample-ms",
                    "--bind-dev",
                    "--switches",
                    "--out",
                ],
                &["--mptcp"],
            )?;
            let amount = match (get(&opts, "--bytes"), get(&opts, "--duration")) {
                (Some(_), Some(_)) => {
                    return Err(usage_error(
                        "--bytes and --duration exclude each other".into(),
                    ))
                }
                (Some(b), None) => {
                    Amount::Bytes(b.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                        usage_error(format!("--bytes: expected an integer > 0, got {b:?}"))
                    })?)
                }
                (None, Some(d)) => Amount::Duration(
                    d.parse::<f64>()
                        .ok()
                        .filter(|s| s.is_finite() && *s > 0.0)
                        .map(Duration::from_secs_f64)
                        .ok_or_else(|| {
                            usage_error(format!("--duration: expected seconds > 0, got {d:?}"))
                        })?,
                ),
                (None, None) => Amount::UntilSignal,
            };
            let sample_ms = match get(&opts, "--sample-ms") {
                None => 10,
                Some(s) => s.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                    usage_error(format!("--sample-ms: expected an integer >= 1, got {s:?}"))
                })?,
            };
            let cc = required(&opts, "--cc")?;
            if cc.is_empty() || cc.len() >= 16 {
                return Err(usage_error(format!("--cc: bad algorithm name {cc:?}")));
            }
            Ok(Command::Client(ClientArgs {
                connect: socket_addr("--connect", required(&opts, "--connect")?)?,
                cc: cc.to_owned(),
                amount,
                mptcp: get(&opts, "--mptcp").is_some(),
                sample_interval: Duration::from_millis(sample_ms),
                bind_dev: get(&opts, "--bind-dev").map(str::to_owned),
                switches: super::handoff::parse_switches(get(&opts, "--switches").unwrap_or(""))
                    .map_err(usage_error)?,
                out: PathBuf::from(required(&opts, "--out")?),
            }))
        }
        other => Err(usage_error(format!(
            "unknown subcommand {other:?} (accepted: server, client)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn client_defaults_and_values() {
        let Command::Client(c) = parse(&argv(
            "client --connect 10.0.0.2:5000 --cc bbr --bytes 1000 --out x.jsonl",
        ))
        .unwrap() else {
            panic!("not a client")
        };
        assert_eq!(c.amount, Amount::Bytes(1000));
        assert_eq!(c.sample_interval, Duration::from_millis(10));
        assert!(!c.mptcp);
        let Command::Client(c) = parse(&argv("client --connect 1.2.3.4:5 --cc=reno --duration 2.5 --mptcp --sample-ms 5 --bind-dev v0 --out o")).unwrap() else {
            panic!("not a client")
        };
        assert_eq!(c.amount, Amount::Duration(Duration::from_millis(2500)));
        assert!(c.mptcp);
        assert_eq!(c.bind_dev.as_deref(), Some("v0"));
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        for bad in [
            "client --connect 1.2.3.4:5 --cc reno --bytes 1 --duration 1 --out o",
            "client --connect nowhere --cc reno --out o",
            "client --connect 1.2.3.4:5 --out o",
            "client --connect 1.2.3.4:5 --cc reno --bytes -3 --out o",
            "client --connect 1.2.3.4:5 --cc reno --frobnicate --out o",
            "server",
            "serve --bind 1.2.3.4:5",
        ] {
            let e = parse(&argv(bad)).unwrap_err();
            assert_eq!(e.exit_code, 2, "{bad}");
            assert!(!e.message.contains('\n'), "{bad}: {}", e.message);
        }
    }
}
