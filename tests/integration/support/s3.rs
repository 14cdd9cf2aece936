//! The S3 server: clients for the test bucket, store URLs, and the environment that points the
//! binary at it.

use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::{ClientOptions, RetryConfig};

use super::env::{s3_access_key, s3_bucket, s3_endpoint, s3_region, s3_secret_key};

/// An S3 client for the test bucket with the configured credentials.
pub fn s3_store() -> AmazonS3 {
    s3_store_with_secret(&s3_secret_key())
}

/// An S3 client for the test bucket with the configured access key and the given secret.
pub fn s3_store_with_secret(secret: &str) -> AmazonS3 {
    AmazonS3Builder::new()
        // Client options first: with_client_options replaces all of them, allow_http included.
        .with_client_options(ClientOptions::new().with_timeout(Duration::from_secs(30)))
        .with_endpoint(s3_endpoint())
        .with_allow_http(true)
        .with_access_key_id(s3_access_key())
        .with_secret_access_key(secret)
        .with_region(s3_region())
        .with_bucket_name(s3_bucket())
        .with_virtual_hosted_style_request(false)
        .with_retry(RetryConfig {
            max_retries: 1,
            retry_timeout: Duration::from_secs(10),
            ..RetryConfig::default()
        })
        .build()
        .expect("build the S3 client")
}

/// `s3://<bucket>/<prefix>`, a store URL for the command-line tool.
pub fn s3_url(prefix: &str) -> String {
    format!("s3://{}/{}", s3_bucket(), prefix.trim_start_matches('/'))
}

/// Environment variables that point an `object_store` S3 client configured from the environment
/// (`AmazonS3Builder::from_env`) at the test server.
pub fn s3_env() -> Vec<(String, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID".into(), s3_access_key()),
        ("AWS_SECRET_ACCESS_KEY".into(), s3_secret_key()),
        ("AWS_REGION".into(), s3_region()),
        ("AWS_DEFAULT_REGION".into(), s3_region()),
        ("AWS_ENDPOINT".into(), s3_endpoint()),
        ("AWS_ENDPOINT_URL".into(), s3_endpoint()),
        ("AWS_ALLOW_HTTP".into(), "true".into()),
        ("AWS_VIRTUAL_HOSTED_STYLE_REQUEST".into(), "false".into()),
    ]
}
