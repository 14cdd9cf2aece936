//! `--at TIME` on the read commands (`show`, `export`, `diff`, `restore`): the request of the
//! offsets at an instant, checked before any I/O; [`crate::log::at`] reconstructs them.

use chrono::{DateTime, Utc};

use crate::diff::Filter;
use crate::error::{Error, Result};
use crate::log::at::{millis, AtRequest};
use crate::timeutil::parse_time;

/// The request of `--at TIME` with a selection, checked before any I/O.
pub fn request(
    text: &str,
    filter: Filter,
    command: &'static str,
    now: DateTime<Utc>,
) -> Result<AtRequest> {
    if !filter.partitions.is_empty() && filter.topics.is_empty() {
        return Err(Error::usage("--partition needs --topic"));
    }
    let at = parse_time(text, now)?;
    if at > now {
        return Err(Error::usage(format!(
            "--at {text}: {} is in the future; the commit log holds only what happened",
            millis(at)
        )));
    }
    Ok(AtRequest {
        at,
        filter,
        command,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_checked_before_anything_is_read() {
        let now = DateTime::parse_from_rfc3339("2026-12-03T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let f = |topics: &[&str], partitions: &[i32]| Filter {
            topics: topics.iter().map(|t| t.to_string()).collect(),
            partitions: partitions.to_vec(),
            ..Default::default()
        };
        // (time, filter, the instant or the words of the refusal)
        let cases: Vec<(&str, Filter, std::result::Result<&str, &str>)> = vec![
            (
                "2026-12-03T10:03:17.250Z",
                f(&[], &[]),
                Ok("2026-12-03T10:03:17.250Z"),
            ),
            ("15m", f(&["t"], &[1]), Ok("2026-12-03T11:45:00.000Z")),
            ("yesterday", f(&[], &[]), Err("RFC 3339")),
            ("2026-12-04T00:00:00Z", f(&[], &[]), Err("in the future")),
            ("1h", f(&[], &[1]), Err("--partition needs --topic")),
        ];
        for (text, filter, want) in cases {
            let got = request(text, filter, "show", now)
                .map(|r| millis(r.at))
                .map_err(|e| e.to_string());
            match (got, want) {
                (Ok(t), Ok(w)) => assert_eq!(t, w, "{text}"),
                (Err(e), Err(words)) => assert!(e.contains(words), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }
}
