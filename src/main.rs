//! The `offset-vault` binary: parse arguments, set up logging, run, map errors to exit codes.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use offset_vault::cli::{self, Cli};
use tracing_subscriber::EnvFilter;

fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "error,librdkafka=off",
        (false, 0) => "warn,librdkafka=off",
        (false, 1) => "info,librdkafka=off",
        (false, 2) => "debug,librdkafka=warn",
        _ => "trace,librdkafka=debug",
    };
    let filter =
        EnvFilter::try_from_env("OFFSET_VAULT_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        // Escape codes only for a terminal, and never with NO_COLOR.
        .with_ansi(
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .init();
}

/// glibc gives each thread that allocates its own arena (up to eight per core) and keeps what
/// each one held at its peak. The work here is a few threads handing batches to each other, so
/// two arenas serve as well and keep the resident memory near what is in use. A fixed mmap
/// threshold keeps large buffers (a batch's rows, a listing of groups) out of the arenas: they
/// go back to the system when freed, where glibc's default raises the threshold after the
/// first such free and then keeps them. A restore of 100,000 groups peaked at 149 MiB resident
/// with the default and at 136 MiB with this (benches/RESULTS.md, "100,000 small groups").
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt is called before any other thread exists, with valid parameters.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

fn main() -> ExitCode {
    tune_malloc();
    let matches = Cli::command().get_matches();
    let mut args = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let _failpoints = offset_vault::failpoint::setup();
    init_logging(args.global.verbose, args.global.quiet);
    offset_vault::console::set_quiet(args.global.quiet);
    // Flags > environment > the configuration file's context > built-in defaults.
    let strict = args.command.needs_context();
    if let Err(e) = cli::config::apply(&mut args, &matches, strict) {
        offset_vault::alertln!("error: {e}");
        return ExitCode::from(e.exit_code() as u8);
    }
    let json = args.global.output == cli::OutputFormat::Json;
    if args.global.via.as_deref() == Some("mcp") {
        // The MCP server reads these lines and sends them on as progress notifications.
        offset_vault::progress::enable_lines();
    } else {
        offset_vault::progress::enable(offset_vault::progress::should_show(
            std::io::stderr().is_terminal(),
            args.global.quiet,
            json,
        ));
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(cli::run(args));
    offset_vault::progress::finish();
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            offset_vault::alertln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
