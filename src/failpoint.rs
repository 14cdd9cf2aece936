//! Named failpoints for the fault-injection tests, compiled only with the `failpoints` feature
//! (release builds carry none of it).
//!
//! A test sets `FAILPOINTS="<name>=return(<dir>)"` for the binary (the `fail` crate's syntax; its
//! other actions such as `panic` or `sleep(ms)` work too). With `return(<dir>)`, reaching the
//! point creates `<dir>/<name>.reached` and waits until the test creates `<dir>/<name>.go`, so the
//! test can stop a real service at exactly that step and then let the command go on.
//!
//! Points: `snapshot-after-describe`, `snapshot-before-manifest`, `restore-before-stop` (a
//! restore's or reset's, before it stops connectors), `restore-connectors-stopped`,
//! `restore-after-undo`, `restore-after-group-commit` (after each group's commit),
//! `restore-between-batches` (before each batch of groups after the first is committed),
//! `prune-after-manifest` (after a snapshot's manifest is deleted, before its data files).

/// Sets the failpoints up from `FAILPOINTS`; keep the guard alive while the command runs.
#[cfg(feature = "failpoints")]
pub fn setup() -> Option<fail::FailScenario<'static>> {
    Some(fail::FailScenario::setup())
}

/// Without the `failpoints` feature there is nothing to set up.
#[cfg(not(feature = "failpoints"))]
pub fn setup() -> Option<()> {
    None
}

/// Marks a named step.
#[cfg(feature = "failpoints")]
pub fn hit(name: &str) {
    fail::eval(name, |arg| {
        if let Some(dir) = arg {
            rendezvous(name, std::path::Path::new(&dir));
        }
    });
}

/// Without the `failpoints` feature a step costs nothing.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_name: &str) {}

#[cfg(feature = "failpoints")]
fn rendezvous(name: &str, dir: &std::path::Path) {
    let reached = dir.join(format!("{name}.reached"));
    let go = dir.join(format!("{name}.go"));
    if let Err(e) = std::fs::write(&reached, std::process::id().to_string()) {
        eprintln!("failpoint {name}: cannot write {}: {e}", reached.display());
        return;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !go.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
