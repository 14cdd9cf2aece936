//! deploy/helm/offset-vault: `helm lint`, and `helm template` with the default values and with every
//! option on; the rendered manifests are read back and held against the `serve` contract.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_yaml::Value;

use super::{
    check_serve_config, deploy_dir, yaml_file, HEALTHZ, METRICS_PATH, METRICS_PORT, READYZ,
};
use crate::support::tools::{self, run};

fn chart_dir() -> PathBuf {
    deploy_dir().join("helm/offset-vault")
}

/// Every option of values.yaml switched on.
const EVERYTHING_ON: &[&str] = &[
    "deployment.replicas=2",
    "deployment.extraArgs={--follow}",
    "serviceMonitor.enabled=true",
    "serviceMonitor.labels.release=kube-prometheus-stack",
    "prometheusRule.enabled=true",
    "prometheusRule.labels.release=kube-prometheus-stack",
    "cronJob.enabled=true",
    "cronJob.metricsTextfile.enabled=true",
    "envFromSecret=offset-vault-s3",
    "extraEnv[0].name=OFFSET_VAULT_LOG",
    "extraEnv[0].value=debug",
    "imagePullSecrets[0].name=registry",
    "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/ov",
];

fn set_args(sets: &[&str]) -> Vec<String> {
    sets.iter()
        .flat_map(|s| ["--set".to_string(), s.to_string()])
        .collect()
}

fn lint(helm: &Path, sets: &[&str]) {
    let mut args = vec!["lint".to_string(), "--strict".to_string(), ".".to_string()];
    args.extend(set_args(sets));
    let out = run(helm, &args, &chart_dir()).ok("helm lint");
    assert!(out.stdout.contains("0 chart(s) failed"), "{}", out.stdout);
}

/// `helm template` parsed into its documents.
fn template(helm: &Path, sets: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "template".to_string(),
        "ov".to_string(),
        ".".to_string(),
        "--namespace".to_string(),
        "backup".to_string(),
    ];
    args.extend(set_args(sets));
    let out = run(helm, &args, &chart_dir()).ok("helm template");
    serde_yaml::Deserializer::from_str(&out.stdout)
        .map(|doc| {
            Value::deserialize(doc).unwrap_or_else(|e| {
                panic!("helm template printed invalid YAML: {e}\n{}", out.stdout)
            })
        })
        .filter(|doc| !doc.is_null())
        .collect()
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|doc| doc["kind"] == kind).collect()
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().expect("a string"))
        .collect()
}

/// The checks both renderings pass: the Deployment runs `serve --listen 0.0.0.0:<port>`, probes
/// /healthz and /readyz on that port, the Service exposes it, and the ConfigMap's configuration
/// holds jobs the contract knows.
fn check_serve_manifests(docs: &[Value]) {
    let deployments = of_kind(docs, "Deployment");
    assert_eq!(deployments.len(), 1, "one Deployment");
    let pod = &deployments[0]["spec"]["template"]["spec"];
    let containers = pod["containers"].as_sequence().expect("containers");
    assert_eq!(containers.len(), 1);
    let container = &containers[0];

    let args = strings(&container["args"]);
    assert_eq!(
        args.first(),
        Some(&"serve"),
        "the Deployment's args must start with serve: {args:?}"
    );
    let listen = args
        .iter()
        .position(|a| *a == "--listen")
        .map(|i| args[i + 1]);
    assert_eq!(
        listen,
        Some(format!("0.0.0.0:{METRICS_PORT}").as_str()),
        "{args:?}"
    );

    let ports = container["ports"].as_sequence().expect("ports");
    let metrics = ports
        .iter()
        .find(|p| p["name"] == "metrics")
        .expect("a port named metrics");
    assert_eq!(metrics["containerPort"].as_u64(), Some(METRICS_PORT));
    for (probe, path) in [("livenessProbe", HEALTHZ), ("readinessProbe", READYZ)] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"].as_str(), Some(path), "{probe}");
        let port = &get["port"];
        assert!(
            port == &metrics["name"] || port.as_u64() == Some(METRICS_PORT),
            "{probe} probes port {port:?}, not the metrics port"
        );
    }
    let grace = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("terminationGracePeriodSeconds");
    assert!(
        grace >= 60,
        "{grace}s is too short to seal the follower's segment"
    );

    let services = of_kind(docs, "Service");
    assert_eq!(services.len(), 1, "one Service");
    let service_port = &services[0]["spec"]["ports"][0];
    assert_eq!(service_port["port"].as_u64(), Some(METRICS_PORT));
    assert_eq!(service_port["targetPort"], metrics["name"]);
    // The Service selects the serve pods only (not the CronJobs' pods).
    let selector = services[0]["spec"]["selector"]
        .as_mapping()
        .expect("selector");
    let pod_labels = deployments[0]["spec"]["template"]["metadata"]["labels"]
        .as_mapping()
        .expect("labels");
    for (key, value) in selector {
        assert_eq!(
            pod_labels.get(key),
            Some(value),
            "the Service selects {key:?}={value:?}, the pods lack it"
        );
    }
    assert_eq!(
        selector
            .get("app.kubernetes.io/component")
            .and_then(Value::as_str),
        Some("serve")
    );

    let config = of_kind(docs, "ConfigMap")[0]["data"]["config.toml"]
        .as_str()
        .expect("config.toml");
    check_serve_config("the chart's ConfigMap", config);
    let env = container["env"].as_sequence().expect("env");
    let config_path = env
        .iter()
        .find(|e| e["name"] == "OFFSET_VAULT_CONFIG")
        .expect("OFFSET_VAULT_CONFIG");
    assert_eq!(
        config_path["value"].as_str(),
        Some("/etc/offset-vault/config.toml")
    );
}

#[test]
fn helm_lint_passes_with_defaults_and_with_every_option() {
    let Some(helm) = tools::helm() else { return };
    lint(&helm, &[]);
    lint(&helm, EVERYTHING_ON);
}

#[test]
fn helm_template_with_defaults_runs_serve_only() {
    let Some(helm) = tools::helm() else { return };
    let docs = template(&helm, &[]);
    check_serve_manifests(&docs);
    for kind in ["ServiceMonitor", "PrometheusRule", "CronJob"] {
        assert!(
            of_kind(&docs, kind).is_empty(),
            "a {kind} without being asked for"
        );
    }
}

#[test]
fn helm_template_with_every_option() {
    let Some(helm) = tools::helm() else { return };
    let docs = template(&helm, EVERYTHING_ON);
    check_serve_manifests(&docs);
    let deployment = of_kind(&docs, "Deployment")[0];
    assert_eq!(deployment["spec"]["replicas"].as_u64(), Some(2));
    let args = strings(&deployment["spec"]["template"]["spec"]["containers"][0]["args"]);
    assert_eq!(
        args.last(),
        Some(&"--follow"),
        "extraArgs go after serve's own: {args:?}"
    );

    let monitors = of_kind(&docs, "ServiceMonitor");
    assert_eq!(monitors.len(), 1);
    let endpoint = &monitors[0]["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"].as_str(), Some("metrics"));
    assert_eq!(endpoint["path"].as_str(), Some(METRICS_PATH));
    assert_eq!(
        endpoint["honorLabels"].as_bool(),
        Some(true),
        "the rules need the job label as exposed"
    );
    assert_eq!(
        monitors[0]["metadata"]["labels"]["release"].as_str(),
        Some("kube-prometheus-stack")
    );

    // The PrometheusRule is the rule file itself.
    let rules = of_kind(&docs, "PrometheusRule");
    assert_eq!(rules.len(), 1);
    let file = yaml_file(&deploy_dir().join("prometheus/offset-vault.rules.yml"));
    assert_eq!(
        rules[0]["spec"]["groups"], file["groups"],
        "the PrometheusRule differs from the rule file"
    );
    assert!(!file["groups"].as_sequence().expect("groups").is_empty());

    let cronjobs = of_kind(&docs, "CronJob");
    let commands: Vec<&str> = cronjobs
        .iter()
        .map(|job| {
            let spec = &job["spec"];
            assert_eq!(
                spec["concurrencyPolicy"].as_str(),
                Some("Forbid"),
                "{:?}",
                job["metadata"]["name"]
            );
            let pod = &spec["jobTemplate"]["spec"]["template"]["spec"];
            assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
            let container = &pod["containers"][0];
            let args = strings(&container["args"]);
            let textfile = args
                .iter()
                .position(|a| *a == "--metrics-textfile")
                .map(|i| args[i + 1])
                .expect("--metrics-textfile");
            let mount = container["volumeMounts"]
                .as_sequence()
                .expect("volumeMounts")
                .iter()
                .find(|m| m["name"] == "textfile")
                .and_then(|m| m["mountPath"].as_str())
                .expect("a textfile mount");
            assert!(
                textfile.starts_with(&format!("{mount}/")) && textfile.ends_with(".prom"),
                "{textfile} is not a .prom file in {mount}"
            );
            args[0]
        })
        .collect();
    assert_eq!(
        commands,
        ["snapshot", "prune"],
        "the CronJobs' args must start with their command"
    );
    let prune = strings(
        &cronjobs[1]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"],
    );
    assert!(
        prune.contains(&"--execute"),
        "the prune CronJob only plans: {prune:?}"
    );
}

/// The chart's copy of the rules is the rule file (a link), not a second copy that could drift.
#[test]
fn the_chart_takes_the_rules_from_the_rule_file() {
    let link = chart_dir().join("files/offset-vault.rules.yml");
    let target = std::fs::read_link(&link)
        .unwrap_or_else(|e| panic!("{} is not a link: {e}", link.display()));
    assert_eq!(
        link.parent().unwrap().join(target).canonicalize().unwrap(),
        deploy_dir()
            .join("prometheus/offset-vault.rules.yml")
            .canonicalize()
            .unwrap()
    );
}
