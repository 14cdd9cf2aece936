//! `verify` as a library call: each snapshot's files re-hashed against its manifest and id, its
//! signature judged, and with every snapshot, the commit-log archive and the apply records too.

use crate::error::{exit, Result};
use crate::log::verify::LogReport;
use crate::sign::Verdict;
use crate::snapshot::repo::{self, DayRange};
use crate::store::Store;
use clap::Args;

/// One snapshot verified: what is wrong with its content, and its signature.
pub struct Checked {
    pub id: String,
    pub problems: Vec<String>,
    pub signature: Verdict,
}

impl Checked {
    /// Content problems and broken signatures are corruption; unsigned and untrusted snapshots
    /// are not (they fail verification only when trusted keys are configured).
    pub fn corrupt(&self) -> bool {
        !self.problems.is_empty() || matches!(self.signature, Verdict::Invalid { .. })
    }
}

/// What `verify` found.
pub struct Verification {
    pub snapshots: Vec<Checked>,
    /// With every snapshot: the commit-log archive and the apply records.
    pub log: Option<LogReport>,
    /// Trusted keys are configured: only snapshots they signed are accepted.
    pub enforcing: bool,
}

impl Verification {
    /// Corrupt snapshots.
    pub fn failed(&self) -> usize {
        self.snapshots.iter().filter(|c| c.corrupt()).count()
    }

    pub fn unsigned(&self) -> usize {
        self.count(|v| matches!(v, Verdict::Unsigned))
    }

    pub fn untrusted(&self) -> usize {
        self.count(|v| matches!(v, Verdict::Untrusted { .. }))
    }

    fn count(&self, f: impl Fn(&Verdict) -> bool) -> usize {
        self.snapshots.iter().filter(|c| f(&c.signature)).count()
    }

    /// The signature is accepted: anything goes without trusted keys, else only theirs.
    pub fn accepted(&self, v: &Verdict) -> bool {
        !self.enforcing || v.refusal().is_none()
    }

    /// 0 when everything verified (and, with trusted keys, every snapshot is signed by one);
    /// exit 5 otherwise.
    pub fn exit_code(&self) -> i32 {
        let log_ok = self.log.as_ref().is_none_or(|l| l.ok);
        let refused = self.enforcing && (self.unsigned() + self.untrusted()) > 0;
        if self.failed() == 0 && log_ok && !refused {
            exit::OK
        } else {
            exit::INTEGRITY
        }
    }
}

/// `verify ID` checks one snapshot (`id`, or a unique prefix of one); `verify --all` (`None`)
/// every snapshot, and the commit-log archive and the apply records.
pub async fn verify(store: &Store, id: Option<&str>) -> Result<Verification> {
    let mut snapshots = Vec::new();
    let mut log = None;
    match id {
        None => {
            let all = repo::list(store, DayRange::default()).await?;
            crate::progress::stage("snapshots verified", all.len() as u64);
            for listed in all {
                let problems = repo::verify_listed(store, &listed).await;
                crate::progress::advance(1);
                snapshots.push(Checked {
                    id: listed.id,
                    problems,
                    signature: listed.signature,
                });
            }
            crate::progress::finish();
            log = Some(crate::log::verify::verify(store).await?);
        }
        Some(id) => {
            let manifest = repo::resolve(store, id).await?;
            let signature = repo::signature(store, &manifest).await?;
            let (_, problems) = repo::check(store, &manifest).await;
            snapshots.push(Checked {
                id: manifest.meta.id,
                problems,
                signature,
            });
        }
    }
    Ok(Verification {
        snapshots,
        log,
        enforcing: store.keys().enforcing(),
    })
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Snapshot id, or a unique prefix of one.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub id: Option<String>,
    /// Verify every snapshot in the store, and the commit-log archive and the apply records
    /// (orphan data files and recorded gaps are reported as notes, not failures).
    #[arg(long)]
    pub all: bool,
}
