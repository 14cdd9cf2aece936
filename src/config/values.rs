//! Values of flags and settings: durations, sizes, tags, Connect URLs.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::connect::ConnectClient;
use crate::error::{Error, Result};

/// A duration such as `30s`, `2m` or `1h 30m`.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{e} (expected e.g. 30s, 2m)"))
}

/// A size in bytes: a number with an optional unit (`16MiB`, `512KiB`, `1GB`, `4096`).
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("{e} (expected e.g. 16MiB, 512KiB)"))
}

/// Clients of the Connect REST URLs given (blank ones left out).
pub fn connect_clients(urls: &[String], timeout: Duration) -> Result<Vec<ConnectClient>> {
    urls.iter()
        .filter(|u| !u.trim().is_empty())
        .map(|u| ConnectClient::new(u.trim(), timeout))
        .collect()
}

/// Parses repeatable `KEY=VALUE` tags.
pub fn parse_tags(tags: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for t in tags {
        let (k, v) = t
            .split_once('=')
            .ok_or_else(|| Error::usage(format!("--tag {t}: expected KEY=VALUE")))?;
        if k.trim().is_empty() {
            return Err(Error::usage(format!("--tag {t}: the key is empty")));
        }
        if out.insert(k.trim().to_string(), v.to_string()).is_some() {
            return Err(Error::usage(format!("--tag {k} is given twice")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_and_reject_bad_input() {
        let t = parse_tags(&["deploy=1234".into(), "who=a=b".into()]).unwrap();
        assert_eq!(t["deploy"], "1234");
        assert_eq!(t["who"], "a=b");
        assert!(parse_tags(&["novalue".into()]).is_err());
        assert!(parse_tags(&["=x".into()]).is_err());
        assert!(parse_tags(&["a=1".into(), "a=2".into()]).is_err());
    }
}
