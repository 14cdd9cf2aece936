//! The configuration file and its named contexts.
//!
//! A TOML file (`--config FILE`, `OFFSET_VAULT_CONFIG`, or by default
//! `$XDG_CONFIG_HOME/offset-vault/config.toml`, falling back to `~/.config/offset-vault/`) holds
//! named contexts, each a set of connection settings:
//!
//! ```toml
//! current-context = "prod"
//!
//! [contexts.prod]
//! bootstrap-server = "kafka-1:9092,kafka-2:9092"
//! connect-url = ["http://connect:8083"]
//! store = "s3://backups/offsets"
//! command-config = "prod-client.properties"   # relative to this file
//! output = "table"
//! timeout = "30s"
//! audit = "required"                          # or "optional"
//! audit-topic = "offset-vault-audit"
//! properties = { "security.protocol" = "SASL_SSL", "sasl.mechanism" = "SCRAM-SHA-512" }
//! encrypt-to = ["age1..."]                     # snapshot --encrypt-to
//! identity = "vault-identity.txt"              # restore --identity, relative to this file
//! ```
//!
//! `--context NAME` (or `OFFSET_VAULT_CONTEXT`) picks a context, else `current-context` does.
//! Precedence, highest first: command-line flags, environment variables, the context, built-in
//! defaults. A context fills only the settings that neither a flag nor a variable gave.
//! The pure rules (which layer wins, which file, which context) are separate from reading the
//! file ([`file`]); [`global`] holds the global flags and merges a context into them; the
//! command line asks clap where each flag came from (`src/cli`).

mod file;
mod global;
pub mod serve;
mod values;

pub use file::{
    choose_context, config_path, existing, load, missing_context, parse, redacted, resolve,
    use_context, with_current_context, Applied, ConfigFile, Context, Loaded, OneOrMany, Origin,
    Source, ENV_CONFIG, ENV_CONTEXT,
};
pub use global::{apply, merge, GlobalArgs, OutputFormat};
pub use values::{connect_clients, parse_duration, parse_size, parse_tags};

#[cfg(test)]
pub(crate) mod tests;
