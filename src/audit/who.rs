//! Who runs the process: the operating-system user and the host name, read without `unsafe`.

/// The user: `$USER`, else `$LOGNAME`, else the name `/etc/passwd` gives the process's uid, else
/// `uid:N` (or `unknown` where there is no uid).
pub fn user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Ok(v) = std::env::var(var) {
            if !v.trim().is_empty() {
                return v.trim().to_string();
            }
        }
    }
    match uid() {
        Some(uid) => std::fs::read_to_string("/etc/passwd")
            .ok()
            .and_then(|text| name_of_uid(&text, uid))
            .unwrap_or_else(|| format!("uid:{uid}")),
        None => "unknown".into(),
    }
}

/// The process's real uid: the owner of `/proc/self` on Linux.
fn uid() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The name of `uid` in the text of `/etc/passwd`.
pub fn name_of_uid(passwd: &str, uid: u32) -> Option<String> {
    passwd.lines().find_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        let _password = f.next()?;
        let id: u32 = f.next()?.parse().ok()?;
        (id == uid && !name.is_empty()).then(|| name.to_string())
    })
}

/// The host name: `$HOSTNAME`, else the kernel's, else `/etc/hostname`, else `unknown`.
pub fn host() -> String {
    if let Ok(h) = std::env::var("HOSTNAME") {
        if !h.trim().is_empty() {
            return h.trim().to_string();
        }
    }
    for file in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        if let Ok(h) = std::fs::read_to_string(file) {
            if !h.trim().is_empty() {
                return h.trim().to_string();
            }
        }
    }
    "unknown".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_named_from_passwd() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n# comment\nops:x:1000:1000::/home/ops:/bin/sh\nbad line\n";
        for (uid, want) in [(0, Some("root")), (1000, Some("ops")), (5, None)] {
            assert_eq!(name_of_uid(passwd, uid).as_deref(), want, "{uid}");
        }
    }
}
