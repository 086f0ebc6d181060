//! The pipeline, built in memory from the template and the command line, checked by the
//! spec's and the provider table's readers, then written.
use crate::args::Args;
use anyhow::{bail, Context, Result};
use inferbench_contract::vocab::{ArrivalProcess, WireApi};
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use serde_json::{json, Value};
use std::path::Path;

/// The provider's name in the table (and in every file of the run).
pub const PROVIDER: &str = "target";

pub fn run(args: Args) -> Result<()> {
    let steps = match (&args.rates, &args.concurrency, &args.search) {
        (_, Some(users), _) => Steps::Users(parse_list(users).context("--concurrency")?),
        (Some(rates), None, _) => Steps::Rates(parse_list(rates).context("--rates")?),
        (None, None, Some(bounds)) => match parse_list(bounds).context("--search")?[..] {
            [min, max] => Steps::Search(min, max),
            _ => bail!("--search: give two rates, the lowest and the highest, e.g. \"1 256\""),
        },
        (None, None, None) => bail!(
            "give the steps: --rates \"4 8 16\" (open loop), --concurrency \"1 8 32\" (closed loop) \
             or --search \"1 256\" (a capacity search)"
        ),
    };
    let template = Spec::load(&args.template).with_context(|| format!("the template {}", args.template.display()))?;
    let text = std::fs::read_to_string(&args.template)?;
    let mut root: Value = serde_norway::from_str(&text)?;
    let spec_path = args.out.join("spec.yaml");
    if spec_path.exists() {
        bail!("{}: exists; choose a new directory", spec_path.display());
    }
    set_load(&mut root, &args, &steps)?;
    if let Some(objectives) = &args.objectives {
        set_objectives(&mut root["load"]["objectives"], objectives)?;
    }
    root["benchmark"]["slug"] = json!("load");
    root["benchmark"]["name"] = json!(format!("Load sweep of {}", args.target));
    root["providers"]["table"] = json!("providers.yaml");
    if let Some(seconds) = args.timeout_seconds {
        root["inference"]["timeout_seconds"] = json!(seconds);
    }
    if let Some(tokens) = args.max_completion_tokens {
        root["inference"]["max_completion_tokens"] = json!(tokens);
    }
    root["inference"]["api"] = json!(args.api.as_str());
    if args.api == WireApi::Messages {
        // Messages has no JSON mode: the prompt asks for JSON, the answer is checked as always.
        root["inference"]["structured_output"]["mode"] = json!("prompt_only");
    }
    let spec = Spec::from_value(&spec_path, &root)?;
    let table = providers(&args, &template.inference.reasoning.default_effort)?;
    ProviderTable::from_value(&args.out.join("providers.yaml"), &table, &spec)?;
    std::fs::create_dir_all(args.out.join("prompts"))?;
    for family in &template.families {
        let from = template.dir().join(&family.prompt_template);
        let to = args.out.join(&family.prompt_template);
        std::fs::create_dir_all(to.parent().unwrap_or(&args.out))?;
        std::fs::copy(&from, &to).with_context(|| format!("copying {}", from.display()))?;
    }
    let header = format!(
        "# Written by ib-load-spec from {} for {} serving {}: one provider, one step per rate.\n\
         # Keys: crates/inputs/src/spec/load.rs. Edit and run again under a new run directory.\n",
        args.template.display(),
        args.target,
        args.model
    );
    write(&args.out.join("providers.yaml"), &table, "# The one provider of this load workflow.\n")?;
    write(&spec_path, &root, &header)?;
    match steps {
        Steps::Search(min, max) => {
            eprintln!(
                "ib-load-spec: {} (a capacity search from {min} to {max} req/s against {})",
                spec_path.display(),
                args.target
            )
        }
        _ => eprintln!("ib-load-spec: {} ({} step(s) against {})", spec_path.display(), steps.len(), args.target),
    }
    Ok(())
}

/// Numbers separated by spaces or commas.
fn parse_list(text: &str) -> Result<Vec<f64>> {
    let values: Vec<f64> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<f64>().with_context(|| format!("`{s}` is not a number")))
        .collect::<Result<_>>()?;
    if values.is_empty() {
        bail!("no value in `{text}`");
    }
    Ok(values)
}

/// The steps the command line asks for.
enum Steps {
    Rates(Vec<f64>),
    Users(Vec<f64>),
    /// A capacity search between two rates.
    Search(f64, f64),
}

/// `--objectives`: `key=value` pairs set over the template's objectives (`key=off` removes
/// one); the spec's reader checks the keys and values.
fn set_objectives(objectives: &mut Value, text: &str) -> Result<()> {
    if !objectives.is_object() {
        *objectives = json!({});
    }
    for pair in text.split(|c: char| c.is_whitespace() || c == ',').filter(|s| !s.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--objectives: `{pair}` is not key=value, e.g. e2e_ms=2000");
        };
        let value = match value {
            "off" => {
                objectives.as_object_mut().map(|m| m.remove(key));
                continue;
            }
            "true" => json!(true),
            "false" => json!(false),
            number => json!(number
                .parse::<f64>()
                .with_context(|| format!("--objectives: {key}: `{number}` is not a number"))?),
        };
        objectives[key] = value;
    }
    Ok(())
}

impl Steps {
    fn len(&self) -> usize {
        match self {
            Steps::Rates(list) | Steps::Users(list) => list.len(),
            Steps::Search(..) => 0,
        }
    }
}

/// The load section: the template's objectives and seed, the command line's steps.
fn set_load(root: &mut Value, args: &Args, steps: &Steps) -> Result<()> {
    let template = root.get("load").cloned().unwrap_or_else(|| json!({}));
    let shown = |list: &[f64]| list.iter().map(f64::to_string).collect::<Vec<_>>().join(", ");
    let mut load = match steps {
        // A tenth of each step warms the endpoint up and a twentieth lets it cool down.
        Steps::Rates(rates) => json!({
            "description": format!("make load: {} at {} req/s", args.arrivals, shown(rates)),
            "mode": "open_loop",
            "arrivals": args.arrivals.as_str(),
            "rates": rates,
            "step_seconds": args.duration,
            "warmup_seconds": round3(args.duration * 0.1),
            "cooldown_seconds": round3(args.duration * 0.05),
        }),
        Steps::Search(min, max) => json!({
            "description": format!("make load: a capacity search from {min} to {max} req/s, {} arrivals", args.arrivals),
            "mode": "open_loop",
            "arrivals": args.arrivals.as_str(),
            "search": {"min_rate": min, "max_rate": max, "tolerance": args.tolerance, "max_probes": args.max_probes},
            "step_seconds": args.duration,
            "warmup_seconds": round3(args.duration * 0.1),
            "cooldown_seconds": round3(args.duration * 0.05),
        }),
        // The spec's reader refuses a count of users that is not a whole number.
        Steps::Users(users) => json!({
            "description": format!("make load: closed loop of {} user(s), {} request(s) each", shown(users), args.requests_per_user),
            "mode": "closed_loop",
            "concurrencies": users.iter().map(|u| if u.fract() == 0.0 && *u >= 0.0 { json!(*u as u64) } else { json!(u) }).collect::<Vec<_>>(),
            "requests_per_user": args.requests_per_user,
        }),
    };
    if matches!(steps, Steps::Rates(_) | Steps::Search(..)) && args.arrivals == ArrivalProcess::Gamma {
        load["burstiness"] = json!(args.burstiness.unwrap_or(1.0));
    }
    for key in ["seed", "objectives"] {
        if let Some(value) = template.get(key) {
            load[key] = value.clone();
        }
    }
    if let Some(workload) = synthetic(args)? {
        load["description"] = json!(format!("{} of synthetic prompts", load["description"].as_str().unwrap_or("")));
        load["workload"] = workload;
        // No rubric scores a synthetic answer: goodput is the latency objectives'.
        if let Some(objectives) = load.get_mut("objectives").and_then(Value::as_object_mut) {
            objectives.remove("correct");
        }
    }
    if let Some(map) = root.as_object_mut() {
        map.remove("execution_plan");
        map.insert("load".into(), load);
    }
    Ok(())
}

/// The synthetic workload the command line asks for, if any: lengths as a number or MIN-MAX.
fn synthetic(args: &Args) -> Result<Option<Value>> {
    let (Some(input), Some(output)) = (&args.input_tokens, &args.output_tokens) else { return Ok(None) };
    let lengths = |text: &str, flag: &str| -> Result<Value> {
        let number = |s: &str| s.trim().parse::<u64>().with_context(|| format!("{flag}: `{s}` is not a whole number"));
        Ok(match text.split_once('-') {
            Some((min, max)) => json!({"distribution": "uniform", "min": number(min)?, "max": number(max)?}),
            None => json!(number(text)?),
        })
    };
    let mut workload = json!({
        "kind": "synthetic",
        "input_tokens": lengths(input, "--input-tokens")?,
        "output_tokens": lengths(output, "--output-tokens")?,
    });
    if let Some(prefix) = args.prefix_tokens {
        workload["shared_prefix_tokens"] = json!(prefix);
    }
    if args.ignore_eos {
        workload["ignore_eos"] = json!(true);
    }
    Ok(Some(workload))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The provider table: the endpoint on its API, with a bearer token from `--credential-env`.
fn providers(args: &Args, effort: &str) -> Result<Value> {
    let price = parse_list(&args.price_usd_per_million_tokens).context("--price-usd-per-million-tokens")?;
    let [input, output] = price[..] else { bail!("--price-usd-per-million-tokens: give two prices, input and output") };
    let base = args.target.trim_end_matches('/');
    // The API's route below `v1/`: `/chat/completions`, `/responses`, `/messages`.
    let path = args.api.route().trim_start_matches("v1");
    let endpoint = if base.ends_with(path) { base.to_string() } else { format!("{base}{path}") };
    let mut row = json!({
        "name": PROVIDER,
        "label": args.target,
        "endpoint": endpoint,
        "api": args.api.as_str(),
        "auth": {"kind": "bearer", "env": args.credential_env},
        "model_id": args.model,
        "price_usd_per_million_tokens": {"input": input, "output": output},
    });
    match args.api {
        WireApi::ChatCompletions => {
            row["token_limit_field"] = json!("max_tokens");
            row["reasoning"] = json!({"reasoning_effort": effort});
        }
        WireApi::Responses => row["reasoning"] = json!({"reasoning": {"effort": effort}}),
        // An effort is no thinking budget: any effort but none (thinking off) is given the
        // API's least budget, 1,024 tokens; another is set in the written providers.yaml.
        WireApi::Messages if effort == "none" => row["reasoning"] = json!({"thinking": {"type": "disabled"}}),
        WireApi::Messages => row["reasoning"] = json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    }
    Ok(json!({"providers": [row]}))
}

fn write(path: &Path, value: &Value, header: &str) -> Result<()> {
    let text = format!("{header}{}", serde_norway::to_string(value)?);
    inferbench_store::atomic::write(path, text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> Args {
        let base = ["ib-load-spec", "--out", "/tmp/x", "--target", "http://127.0.0.1:8080/v1", "--model", "m"];
        Args::parse_from(base.iter().chain(extra))
    }

    #[test]
    fn lists_take_spaces_or_commas_and_refuse_what_is_not_a_number() {
        assert_eq!(parse_list("4 8,16").unwrap(), [4.0, 8.0, 16.0]);
        assert!(parse_list("4 fast").unwrap_err().to_string().contains("`fast` is not a number"));
        assert!(parse_list(" , ").is_err());
    }

    #[test]
    fn rates_make_an_open_loop_and_users_a_closed_one_checked_by_the_specs_reader() {
        let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/load-sweep/spec.yaml");
        let mut root: Value = serde_norway::from_str(&std::fs::read_to_string(&template).unwrap()).unwrap();
        let open = args(&["--rates", "2 4", "--duration", "20"]);
        set_load(&mut root, &open, &Steps::Rates(vec![2.0, 4.0])).unwrap();
        assert_eq!(root["load"]["mode"], "open_loop");
        assert_eq!(
            (root["load"]["warmup_seconds"].as_f64(), root["load"]["cooldown_seconds"].as_f64()),
            (Some(2.0), Some(1.0))
        );
        let spec = Spec::from_value(&template, &root).unwrap();
        assert_eq!(spec.load.unwrap().steps.len(), 2);
        let closed = args(&["--concurrency", "1 8", "--requests-per-user", "5"]);
        set_load(&mut root, &closed, &Steps::Users(vec![1.0, 8.0])).unwrap();
        let plan = Spec::from_value(&template, &root).unwrap().load.unwrap();
        assert_eq!(plan.requests_per_user, Some(5));
        set_load(&mut root, &closed, &Steps::Users(vec![1.5])).unwrap();
        let err = Spec::from_value(&template, &root).unwrap_err().to_string();
        assert!(err.contains("load.concurrencies[0]"), "{err}");
        let search = args(&["--search", "1 64", "--objectives", "e2e_ms=500 ttfa_ms=off correct=false"]);
        set_load(&mut root, &search, &Steps::Search(1.0, 64.0)).unwrap();
        set_objectives(&mut root["load"]["objectives"], search.objectives.as_deref().unwrap()).unwrap();
        let plan = Spec::from_value(&template, &root).unwrap().load.unwrap();
        let found = plan.search.expect("a search");
        assert_eq!((found.min_rate, found.max_rate, found.tolerance), (1.0, 64.0, 0.05));
        assert_eq!(
            (plan.objectives.e2e_ms, plan.objectives.ttfa_ms, plan.objectives.correct),
            (Some(500.0), None, false)
        );
        let err = set_objectives(&mut json!({}), "e2e_ms=fast").unwrap_err().to_string();
        assert!(err.contains("e2e_ms: `fast` is not a number"), "{err}");
        let table = providers(&open, "low").unwrap();
        assert_eq!(table["providers"][0]["endpoint"], "http://127.0.0.1:8080/v1/chat/completions");
        assert_eq!(table["providers"][0]["auth"]["env"], "IB_LOAD_API_KEY");
    }

    #[test]
    fn the_api_chooses_the_path_and_the_rows_fields_checked_by_the_tables_reader() {
        let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/load-sweep/spec.yaml");
        for (api, path) in
            [("responses", "/v1/responses"), ("messages", "/v1/messages"), ("chat-completions", "/v1/chat/completions")]
        {
            let mut root: Value = serde_norway::from_str(&std::fs::read_to_string(&template).unwrap()).unwrap();
            let a = args(&["--rates", "2", "--api", api]);
            root["inference"]["api"] = json!(api);
            if api == "messages" {
                root["inference"]["structured_output"]["mode"] = json!("prompt_only");
            }
            let spec = Spec::from_value(&template, &root).unwrap();
            let table = providers(&a, &spec.inference.reasoning.default_effort).unwrap();
            assert_eq!(table["providers"][0]["endpoint"], format!("http://127.0.0.1:8080{path}"), "{api}");
            ProviderTable::from_value(std::path::Path::new("providers.yaml"), &table, &spec).unwrap();
        }
        let err =
            Args::try_parse_from(["ib-load-spec", "--out", "o", "--target", "t", "--model", "m", "--api", "grpc"]);
        assert!(err.unwrap_err().to_string().contains("`grpc` is not one of chat-completions, responses, messages"));
    }

    #[test]
    fn input_and_output_tokens_make_a_synthetic_workload_checked_by_the_specs_reader() {
        use inferbench_contract::vocab::LengthDistribution;
        let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/load-sweep/spec.yaml");
        let mut root: Value = serde_norway::from_str(&std::fs::read_to_string(&template).unwrap()).unwrap();
        let a =
            args(&["--rates", "4 8", "--input-tokens", "512", "--output-tokens", "64-256", "--prefix-tokens", "100"]);
        set_load(&mut root, &a, &Steps::Rates(vec![4.0, 8.0])).unwrap();
        assert!(root["load"]["objectives"].get("correct").is_none(), "a synthetic answer is not scored");
        let plan = Spec::from_value(&template, &root).unwrap().load.unwrap();
        let w = plan.workload.synthetic().expect("a synthetic workload");
        assert_eq!((w.input_tokens.as_ref().unwrap().min, w.shared_prefix_tokens, w.ignore_eos), (512, 100, false));
        let output = w.output_tokens.as_ref().unwrap();
        assert_eq!((output.distribution, output.min, output.max), (LengthDistribution::Uniform, 64, 256));
        let bad = args(&["--rates", "4", "--input-tokens", "many", "--output-tokens", "8"]);
        let err = set_load(&mut root, &bad, &Steps::Rates(vec![4.0])).unwrap_err().to_string();
        assert!(err.contains("--input-tokens: `many` is not a whole number"), "{err}");
        let eos = args(&["--rates", "4", "--input-tokens", "16", "--output-tokens", "8", "--ignore-eos"]);
        set_load(&mut root, &eos, &Steps::Rates(vec![4.0])).unwrap();
        assert!(Spec::from_value(&template, &root).unwrap().load.unwrap().workload.synthetic().unwrap().ignore_eos);
        assert!(
            Args::try_parse_from([
                "ib-load-spec",
                "--out",
                "x",
                "--target",
                "t",
                "--model",
                "m",
                "--input-tokens",
                "5"
            ])
            .is_err(),
            "an input length needs an output length"
        );
    }
}
