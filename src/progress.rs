//! Progress on long work: one global reporter, off by default, that the command line turns on
//! when stderr is a terminal (and neither `-q` nor `--output json` is given).
//!
//! The engine reports with one-line calls: [`stage`] starts a bar for a named step with a known
//! total (or a spinner when the total is 0), [`advance`] moves it, [`finish`] clears it. With the
//! reporter off, each call is one atomic load. Nothing here decides anything the engine does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static ENABLED: AtomicBool = AtomicBool::new(false);
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Whether progress is shown: only on a terminal, never with `-q` or JSON output.
pub fn should_show(stderr_is_terminal: bool, quiet: bool, json: bool) -> bool {
    stderr_is_terminal && !quiet && !json
}

/// The bar's template: colored unless `NO_COLOR` is set (to anything but the empty string).
pub fn template(total_known: bool, no_color: bool) -> &'static str {
    match (total_known, no_color) {
        (true, false) => {
            "{spinner:.green} {msg} [{bar:30.cyan/blue}] {pos}/{len} ({per_sec}, {elapsed})"
        }
        (true, true) => "{spinner} {msg} [{bar:30}] {pos}/{len} ({per_sec}, {elapsed})",
        (false, false) => "{spinner:.green} {msg} {pos} ({elapsed})",
        (false, true) => "{spinner} {msg} {pos} ({elapsed})",
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Turns progress on or off for this process.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

fn with_bar(f: impl FnOnce(&mut Option<ProgressBar>)) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut bar) = BAR.lock() {
        f(&mut bar);
    }
}

/// Starts a named step with `total` units of work (0: unknown, shown as a spinner); ends the
/// previous step.
pub fn stage(name: &str, total: u64) {
    with_bar(|slot| {
        if let Some(old) = slot.take() {
            old.finish_and_clear();
        }
        let bar = ProgressBar::with_draw_target(
            (total > 0).then_some(total),
            ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = ProgressStyle::with_template(template(total > 0, no_color())) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(name.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        *slot = Some(bar);
    });
}

/// Moves the current step on by `n` units.
pub fn advance(n: u64) {
    with_bar(|slot| {
        if let Some(bar) = slot {
            bar.inc(n);
        }
    });
}

/// Runs `f` (which writes to stderr) with the current bar hidden, so lines and bar do not mix.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    if ENABLED.load(Ordering::Relaxed) {
        if let Ok(bar) = BAR.lock() {
            if let Some(bar) = bar.as_ref() {
                return bar.suspend(f);
            }
        }
    }
    f()
}

/// Clears the current step (before printing results).
pub fn finish() {
    with_bar(|slot| {
        if let Some(bar) = slot.take() {
            bar.finish_and_clear();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_only_on_a_terminal_without_quiet_or_json() {
        // (terminal, quiet, json, shown)
        let cases = [
            (true, false, false, true),
            (false, false, false, false),
            (true, true, false, false),
            (true, false, true, false),
            (false, true, true, false),
        ];
        for (tty, quiet, json, want) in cases {
            assert_eq!(should_show(tty, quiet, json), want, "{tty} {quiet} {json}");
        }
    }

    #[test]
    fn no_color_templates_have_no_color_names() {
        for total in [true, false] {
            let plain = template(total, true);
            assert!(
                !plain.contains(".green") && !plain.contains(".cyan"),
                "{plain}"
            );
            assert!(template(total, false).contains(".green"));
            ProgressStyle::with_template(plain).expect("valid template");
            ProgressStyle::with_template(template(total, false)).expect("valid template");
        }
    }

    #[test]
    fn calls_are_harmless_when_off() {
        stage("x", 3);
        advance(1);
        finish();
        assert!(BAR.lock().unwrap().is_none());
    }
}
