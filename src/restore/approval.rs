//! Signed plan files and their approvals: a second pair of eyes before a reviewed plan is
//! applied.
//!
//! A plan file carries its body's SHA-256. The author's signature (`--signing-key` when the plan
//! is written) and each approval (`approve PLAN --key FILE`) sign that digest, so they sign the
//! body; they sit beside it in the file, outside the checksum, so approving does not change what
//! was reviewed. A plan changed after approval no longer matches its checksum, or (with the
//! checksum recomputed) no longer matches the signatures: either way it is refused.
//!
//! An approval counts when it verifies under a trusted key, that key is not the author's, and no
//! other counted approval is by the same key. Pure: plan file and keys in, decision out.

use super::review::PlanFile;
use crate::error::{Error, Result};
use crate::sign::{Keys, Purpose, SecretKey, Verdict};

/// What the signatures of a plan file say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanTrust {
    /// The author's signature, judged.
    pub author: Verdict,
    /// Each approval, judged, in file order.
    pub approvals: Vec<Verdict>,
    /// The approvals that count (trusted, valid, not the author's key, one per key).
    pub counted: Vec<String>,
}

/// Judges the signatures of a plan file with `keys`.
pub fn judge(file: &PlanFile, keys: &Keys) -> PlanTrust {
    let digest = file.sha256.as_bytes();
    let mut author = Verdict::Unsigned;
    let mut approvals = Vec::new();
    for sig in &file.signatures {
        match sig.purpose {
            Purpose::Plan if matches!(author, Verdict::Unsigned) => {
                author = keys.judge_parsed(Purpose::Plan, digest, sig);
            }
            Purpose::Plan => {
                // Two author signatures: the second one is not the author's, and is not an
                // approval either.
                approvals.push(Verdict::Invalid {
                    key_id: Some(sig.key_id.clone()),
                    problem: "a second author signature".into(),
                });
            }
            _ => approvals.push(keys.judge_parsed(Purpose::PlanApproval, digest, sig)),
        }
    }
    let author_id = author.key_id().map(str::to_string);
    let mut counted: Vec<String> = Vec::new();
    for v in &approvals {
        if let Verdict::Trusted { key_id } = v {
            if Some(key_id) != author_id.as_ref() && !counted.contains(key_id) {
                counted.push(key_id.clone());
            }
        }
    }
    PlanTrust {
        author,
        approvals,
        counted,
    }
}

/// Checks a plan file before it is applied: with trusted keys configured its author must be one
/// of them (exit 5 otherwise), and with `required` approvals that many must count (exit 17
/// otherwise). Nothing has been changed when this fails.
pub fn require(file: &PlanFile, path: &str, keys: &Keys, required: usize) -> Result<PlanTrust> {
    let trust = judge(file, keys);
    if required > 0 && !keys.enforcing() {
        return Err(Error::usage(
            "--require-approvals needs the approvers' public keys: pass --trusted-key (or a context's trusted-keys); approvals count only from trusted keys",
        ));
    }
    if keys.enforcing() {
        if let Some(why) = trust.author.refusal() {
            return Err(Error::Integrity {
                id: format!("plan file {path}"),
                problems: vec![format!("the plan's author: {why}; nothing was changed")],
            });
        }
    }
    let invalid: Vec<String> = trust
        .approvals
        .iter()
        .filter(|v| matches!(v, Verdict::Invalid { .. }))
        .filter_map(|v| v.refusal())
        .collect();
    if required > 0 && (!invalid.is_empty() || trust.counted.len() < required) {
        let mut why = vec![format!(
            "{} of {required} required approval(s) count (valid, by a trusted key other than the author's {}, one per key)",
            trust.counted.len(),
            trust.author.key_id().unwrap_or("(unsigned)")
        )];
        why.extend(
            invalid
                .into_iter()
                .map(|p| format!("an approval is invalid: {p}")),
        );
        for v in &trust.approvals {
            match v {
                Verdict::Untrusted { key_id } | Verdict::Unverified { key_id } => {
                    why.push(format!("approval by key {key_id}: not a trusted key"))
                }
                Verdict::Trusted { key_id } if trust.author.key_id() == Some(key_id) => {
                    why.push(format!("approval by key {key_id}: the author's own key"))
                }
                _ => {}
            }
        }
        return Err(Error::Approval {
            path: path.to_string(),
            problems: why,
        });
    }
    Ok(trust)
}

/// Adds `key`'s approval to a plan file. Refuses the author's own key and a second approval by
/// the same key; with trusted keys configured, refuses a plan whose author is not trusted.
pub fn approve(file: &mut PlanFile, path: &str, key: &SecretKey, keys: &Keys) -> Result<()> {
    let trust = judge(file, keys);
    if keys.enforcing() {
        if let Some(why) = trust.author.refusal() {
            return Err(Error::Integrity {
                id: format!("plan file {path}"),
                problems: vec![format!("the plan's author: {why}; not approved")],
            });
        }
    }
    if trust.author.key_id() == Some(key.id()) {
        return Err(Error::usage(format!(
            "key {} wrote this plan: an approval must come from someone else's key",
            key.id()
        )));
    }
    if file
        .signatures
        .iter()
        .any(|s| s.purpose == Purpose::PlanApproval && s.key_id == key.id())
    {
        return Err(Error::usage(format!(
            "key {} has already approved {path}; nothing was changed",
            key.id()
        )));
    }
    file.signatures
        .push(key.sign(Purpose::PlanApproval, file.sha256.as_bytes()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::review::tests::sealed_plan;

    fn key() -> SecretKey {
        SecretKey::generate().unwrap()
    }

    /// (author, approver 1, approver 2, outsider) and a plan signed by the author.
    fn setup() -> (SecretKey, SecretKey, SecretKey, SecretKey, PlanFile) {
        let (author, a1, a2, outsider) = (key(), key(), key(), key());
        let mut file = sealed_plan();
        file.signatures
            .push(author.sign(Purpose::Plan, file.sha256.as_bytes()));
        (author, a1, a2, outsider, file)
    }

    fn trusting(ks: &[&SecretKey]) -> Keys {
        Keys::new(None, ks.iter().map(|k| k.public()).collect())
    }

    #[test]
    fn two_approvals_by_trusted_keys_other_than_the_author_are_needed_for_two() {
        let (author, a1, a2, _, mut file) = setup();
        let keys = trusting(&[&author, &a1, &a2]);
        let err = require(&file, "p", &keys, 2).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::APPROVAL);
        approve(&mut file, "p", &a1, &keys).unwrap();
        let err = require(&file, "p", &keys, 2).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::APPROVAL);
        assert!(err.to_string().contains("1 of 2"), "{err}");
        approve(&mut file, "p", &a2, &keys).unwrap();
        let trust = require(&file, "p", &keys, 2).unwrap();
        assert_eq!(
            trust.counted,
            vec![a1.id().to_string(), a2.id().to_string()]
        );
        // The file written and read back keeps its approvals.
        let back = PlanFile::from_bytes("p", &file.to_bytes()).unwrap();
        assert_eq!(require(&back, "p", &keys, 2).unwrap().counted.len(), 2);
    }

    #[test]
    fn the_author_cannot_approve_and_one_key_counts_once() {
        let (author, a1, _, _, mut file) = setup();
        let keys = trusting(&[&author, &a1]);
        let err = approve(&mut file, "p", &author, &keys).unwrap_err();
        assert!(err.to_string().contains("someone else"), "{err}");
        // Forcing the author's approval into the file does not make it count.
        file.signatures
            .push(author.sign(Purpose::PlanApproval, file.sha256.as_bytes()));
        approve(&mut file, "p", &a1, &keys).unwrap();
        assert!(approve(&mut file, "p", &a1, &keys).is_err());
        file.signatures
            .push(a1.sign(Purpose::PlanApproval, file.sha256.as_bytes()));
        let err = require(&file, "p", &keys, 2).unwrap_err();
        assert!(err.to_string().contains("the author's own key"), "{err}");
        assert_eq!(require(&file, "p", &keys, 1).unwrap().counted.len(), 1);
    }

    #[test]
    fn approvals_by_untrusted_keys_do_not_count() {
        let (author, a1, _, outsider, mut file) = setup();
        let keys = trusting(&[&author, &a1]);
        file.signatures
            .push(outsider.sign(Purpose::PlanApproval, file.sha256.as_bytes()));
        let err = require(&file, "p", &keys, 1).unwrap_err();
        assert!(err.to_string().contains(outsider.id()), "{err}");
    }

    #[test]
    fn a_plan_changed_after_approval_is_refused() {
        let (author, a1, a2, _, mut file) = setup();
        let keys = trusting(&[&author, &a1, &a2]);
        approve(&mut file, "p", &a1, &keys).unwrap();
        approve(&mut file, "p", &a2, &keys).unwrap();
        // Changed, and the checksum recomputed so the file itself is consistent again.
        let mut changed = file.clone();
        changed.body.snapshot_id.push('x');
        changed.body.plan.snapshot_id.push('x');
        let resealed = PlanFile::seal(changed.body.clone());
        changed.sha256 = resealed.sha256;
        let bytes = changed.to_bytes();
        let back = PlanFile::from_bytes("p", &bytes).unwrap();
        let err = require(&back, "p", &keys, 2).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::INTEGRITY, "{err}");
        // Without trusted keys there is nothing to check the author against, but approvals are
        // still required to verify: changed, they are invalid.
        let only_approvers = trusting(&[&a1, &a2]);
        let err = require(&back, "p", &only_approvers, 2).unwrap_err();
        assert!(
            matches!(
                err.exit_code(),
                crate::error::exit::INTEGRITY | crate::error::exit::APPROVAL
            ),
            "{err}"
        );
    }

    #[test]
    fn unsigned_plans_with_trusted_keys_and_approvals_without_them() {
        let a1 = key();
        let file = sealed_plan();
        let err = require(&file, "p", &trusting(&[&a1]), 0).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::INTEGRITY);
        assert!(err.to_string().contains("not signed"), "{err}");
        let err = require(&file, "p", &Keys::default(), 1).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::USAGE);
        // No keys and no approvals required: an unsigned plan is applied as before.
        require(&file, "p", &Keys::default(), 0).unwrap();
    }
}
