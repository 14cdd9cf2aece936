//! Parsing of points in time given on the command line.

use chrono::{DateTime, Utc};

use crate::error::{Error, Result};

/// Parses an RFC 3339 time (`2026-12-01T10:00:00Z`), a date (`2026-12-01`, midnight UTC), or a
/// duration meaning "that long before `now`" (`90m`, `2h`, `1d 12h`).
pub fn parse_time(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    let t = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(dt.with_timezone(&Utc));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    if let Ok(d) = humantime::parse_duration(t) {
        let d = chrono::Duration::from_std(d)
            .map_err(|_| Error::usage(format!("{text}: duration too large")))?;
        return now
            .checked_sub_signed(d)
            .ok_or_else(|| Error::usage(format!("{text}: duration too large")));
    }
    Err(Error::usage(format!(
        "{text}: expected an RFC 3339 time like 2026-12-01T10:00:00Z, a date like 2026-12-01, or a duration like 2h (meaning two hours ago)"
    )))
}

/// A time in ms since the epoch as RFC 3339 with milliseconds (the number itself if out of range).
pub fn millis_text(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| ms.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn parses_times_dates_and_durations() {
        let now = Utc.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap();
        assert_eq!(
            parse_time("2026-12-01T10:00:00Z", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap()
        );
        assert_eq!(
            parse_time("2026-12-01T11:00:00+01:00", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap()
        );
        assert_eq!(
            parse_time("2026-12-01", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
        );
        assert_eq!(
            parse_time("2h", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 0).unwrap()
        );
        assert_eq!(
            parse_time("1d 30m", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 11, 30, 0).unwrap()
        );
        let err = parse_time("yesterday", now).unwrap_err().to_string();
        assert!(err.contains("RFC 3339"), "{err}");
    }
}
