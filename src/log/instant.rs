//! How messages of the commit-log archive write an instant. Pure; read by the reconstruction
//! ([`super::at`]), its base ([`super::base`]) and its coverage check ([`super::coverage`]).

use chrono::{DateTime, SecondsFormat, Utc};

/// An instant as the messages write it (RFC 3339, milliseconds, `Z`).
pub fn millis(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_is_written_in_milliseconds_and_utc() {
        // (instant, as written)
        let cases = [
            ("2026-12-03T10:03:17.250Z", "2026-12-03T10:03:17.250Z"),
            ("2026-12-03T10:03:17Z", "2026-12-03T10:03:17.000Z"),
            (
                "2026-12-03T11:03:17.250999+01:00",
                "2026-12-03T10:03:17.250Z",
            ),
        ];
        for (text, want) in cases {
            let t = DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc);
            assert_eq!(millis(t), want, "{text}");
        }
    }
}
