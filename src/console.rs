//! Lines for people: results on stdout ([`outln!`](crate::outln)), notes and alerts on stderr
//! ([`noteln!`](crate::noteln), [`alertln!`](crate::alertln)). The engine and the command line
//! both write through these, so `-q` and a closed stdout (`| head`) are handled in one place.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// `-q`: informational lines on stderr are left out; results and errors are not.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Writes a line of results to stdout. A closed stdout (`| head`) is not an error: the rest of
/// the output is dropped quietly, and the command goes on (a restore is never cut short by it).
pub fn out_line(args: std::fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_fmt(args)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// Standard output for results written as a stream: once the reader has gone away (a closed
/// pipe), everything more is dropped quietly, as [`out_line`] does.
pub struct QuietStdout;

impl Write for QuietStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if STDOUT_CLOSED.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        match std::io::stdout().lock().write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if STDOUT_CLOSED.load(Ordering::Relaxed) {
            return Ok(());
        }
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
                Ok(())
            }
            other => other,
        }
    }
}

/// Writes an informational line to stderr, unless `-q`. Errors writing it are ignored.
pub fn note_line(args: std::fmt::Arguments<'_>) {
    if !QUIET.load(Ordering::Relaxed) {
        alert_line(args);
    }
}

/// Writes a line to stderr even with `-q` (errors, and what must not be missed such as an undo
/// snapshot's id). Errors writing it are ignored.
pub fn alert_line(args: std::fmt::Arguments<'_>) {
    crate::progress::suspend(|| write_stderr(args));
}

fn write_stderr(args: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_fmt(args)
        .and_then(|()| stderr.write_all(b"\n"));
}

/// A line of results on stdout.
#[macro_export]
macro_rules! outln {
    () => { $crate::console::out_line(format_args!("")) };
    ($($arg:tt)*) => { $crate::console::out_line(format_args!($($arg)*)) };
}

/// An informational line on stderr (left out with `-q`).
#[macro_export]
macro_rules! noteln {
    ($($arg:tt)*) => { $crate::console::note_line(format_args!($($arg)*)) };
}

/// A line on stderr that `-q` keeps.
#[macro_export]
macro_rules! alertln {
    ($($arg:tt)*) => { $crate::console::alert_line(format_args!($($arg)*)) };
}
