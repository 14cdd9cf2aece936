//! Memory the process has freed, handed back to the operating system.
//!
//! Commands that work in batches (restore, `diff --live`, a snapshot of many groups) free each
//! batch before the next. glibc's allocator keeps most freed memory mapped, so the resident
//! size would grow with the largest pieces ever freed rather than with what is live; between
//! batches the freed pages are returned.

/// Returns the freed pages of the heap to the operating system (glibc's `malloc_trim`); does
/// nothing with other allocators. It walks the allocator's free lists, a few milliseconds.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only reorganizes the allocator's own free memory; it is safe to call
    // at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
