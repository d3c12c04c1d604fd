//! A small command-line reader shared by the two binaries: `--key value` options and
//! positional arguments, with one-line errors naming the option.

pub struct Args {
    items: Vec<String>,
    pos: usize,
}

impl Args {
    pub fn new(items: Vec<String>) -> Args {
        Args { items, pos: 0 }
    }

    pub fn from_env() -> Args {
        Args::new(std::env::args().skip(1).collect())
    }

    /// The next argument, if any.
    pub fn next_arg(&mut self) -> Option<String> {
        let a = self.items.get(self.pos).cloned();
        self.pos += 1;
        a
    }

    /// The value of option `opt` (the argument after it).
    pub fn value(&mut self, opt: &str) -> Result<String, String> {
        self.next_arg()
            .ok_or_else(|| format!("{opt} needs a value"))
    }

    pub fn parsed<T: std::str::FromStr>(&mut self, opt: &str, what: &str) -> Result<T, String> {
        let v = self.value(opt)?;
        v.parse()
            .map_err(|_| format!("{opt}: expected {what}, got {v:?}"))
    }
}

/// `KEY=VALUE` of a `--set` option.
pub fn split_set(item: &str) -> Result<(String, String), String> {
    match item.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("--set expects KEY=VALUE, got {item:?}")),
    }
}
