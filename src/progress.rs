//! Progress on long work: one global reporter, off by default, that the command line turns on
//! when stderr is a terminal (and neither `-q` nor `--output json` is given).
//!
//! The engine reports with one-line calls: [`stage`] starts a bar for a named step with a known
//! total (or a spinner when the total is 0), [`advance`] moves it, [`finish`] clears it. With the
//! reporter off, each call is one atomic load. Nothing here decides anything the engine does.
//!
//! For a program that reads the stderr of the command (the MCP server runs each command as a
//! child), [`enable_lines`] reports the same steps as lines instead of a bar: one
//! [`LINE_PREFIX`] followed by a JSON object `{"stage", "done", "total"}` when a step starts, at
//! every tenth of its total (or every second without one) and when it ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static ENABLED: AtomicBool = AtomicBool::new(false);
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);
static LINES: AtomicBool = AtomicBool::new(false);
static STEP: Mutex<Option<LineStep>> = Mutex::new(None);

/// What starts a progress line on stderr in line mode.
pub const LINE_PREFIX: &str = "offset-vault-progress ";

/// The step reported in line mode.
struct LineStep {
    stage: String,
    done: u64,
    total: u64,
    last: std::time::Instant,
}

impl LineStep {
    fn emit(&mut self) {
        self.last = std::time::Instant::now();
        let line = serde_json::json!({"stage": self.stage, "done": self.done, "total": self.total});
        eprintln!("{LINE_PREFIX}{line}");
    }

    /// Whether moving from `before` to `self.done` is worth a line.
    fn due(&self, before: u64) -> bool {
        if self.total > 0 {
            let tenth = self.total.div_ceil(10);
            before / tenth != self.done / tenth || self.done >= self.total
        } else {
            self.last.elapsed() >= Duration::from_secs(1)
        }
    }
}

/// Reports progress as lines on stderr (see [`LINE_PREFIX`]) in place of a bar.
pub fn enable_lines() {
    ENABLED.store(false, Ordering::Relaxed);
    LINES.store(true, Ordering::Relaxed);
}

fn with_step(f: impl FnOnce(&mut Option<LineStep>)) {
    if !LINES.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut step) = STEP.lock() {
        f(&mut step);
    }
}

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
    with_step(|slot| {
        let mut step = LineStep {
            stage: name.to_string(),
            done: 0,
            total,
            last: std::time::Instant::now(),
        };
        step.emit();
        *slot = Some(step);
    });
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
    with_step(|slot| {
        if let Some(step) = slot {
            let before = step.done;
            step.done += n;
            if step.due(before) {
                step.emit();
            }
        }
    });
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
    with_step(|slot| {
        if let Some(mut step) = slot.take() {
            if step.total == 0 || step.done < step.total {
                step.emit();
            }
        }
    });
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
    fn line_mode_reports_each_tenth_of_a_known_total() {
        let step = |done, total| LineStep {
            stage: "s".into(),
            done,
            total,
            last: std::time::Instant::now(),
        };
        // (before, done, total, due)
        for (before, done, total, due) in [
            (0, 1, 100, false),
            (9, 10, 100, true),
            (10, 11, 100, false),
            (0, 1, 1, true),
            (0, 1, 3, true),
            (98, 99, 100, false),
            (99, 100, 100, true),
            (0, 1, 0, false),
        ] {
            assert_eq!(
                step(done, total).due(before),
                due,
                "{before} -> {done} of {total}"
            );
        }
    }

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
