//! `tcplab-emu`: the emulator's command line (the Python CLI `tcplab emulate` drives it).
//!
//! ```text
//! tcplab-emu run [--seed N] [--scenario FILE|-] [--out FILE] [--sample-interval-us N]
//!                [--late-bound-us N] [--no-realtime] [--quiet] [--stall-at-ms T --stall-for-ms D]
//! tcplab-emu check [--scenario FILE|-]     refusals only; touches nothing
//! tcplab-emu reclaim                       delete namespaces of dead owners
//! tcplab-emu kernel                        JSON: kernel release, congestion controls, missing privileges
//! ```
//!
//! The scenario is the core's resolved JSON (`Scenario.to_core()` in Python); results
//! are the core's result JSON plus `meta.emulation`. Exit codes: 0 ok; 1 the run
//! failed; 2 the scenario was refused or privileges are missing (nothing was created);
//! 128+N stopped by signal N after cleaning up.

use std::io::Read;
use std::process::ExitCode;
use tcplab_emu::{kernel, netns, EmuError, Options};

fn usage() -> ! {
    eprintln!(
        "usage: tcplab-emu run [--seed N] [--scenario FILE|-] [--out FILE] [--sample-interval-us N] [--late-bound-us N] [--no-realtime] [--quiet] [--stall-at-ms T --stall-for-ms D]\n       tcplab-emu check [--scenario FILE|-]\n       tcplab-emu reclaim\n       tcplab-emu kernel"
    );
    std::process::exit(2)
}

fn num(args: &mut impl Iterator<Item = String>, flag: &str) -> u64 {
    let v = args.next().unwrap_or_else(|| usage());
    v.parse().unwrap_or_else(|_| {
        eprintln!("tcplab-emu: {flag}: not a non-negative integer: {v:?}");
        std::process::exit(2)
    })
}

fn read_scenario(path: &str) -> Result<tcplab_core::scenario::Scenario, String> {
    let text = if path == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| format!("stdin: {e}"))?;
        s
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("scenario JSON: {e}"))
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let cmd = args.next().unwrap_or_else(|| usage());
    let mut seed = 0;
    let mut scenario = "-".to_string();
    let mut out: Option<String> = None;
    let mut opts = Options::default();
    let (mut stall_at, mut stall_for) = (None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => seed = num(&mut args, "--seed"),
            "--scenario" => scenario = args.next().unwrap_or_else(|| usage()),
            "--out" => out = Some(args.next().unwrap_or_else(|| usage())),
            "--sample-interval-us" => opts.sample_ns = num(&mut args, &a) * 1_000,
            "--late-bound-us" => opts.late_bound_ns = num(&mut args, &a) * 1_000,
            "--no-realtime" => opts.realtime = false,
            "--quiet" => opts.verbose = false,
            "--stall-at-ms" => stall_at = Some(num(&mut args, &a) * 1_000_000),
            "--stall-for-ms" => stall_for = Some(num(&mut args, &a) * 1_000_000),
            _ => usage(),
        }
    }
    if let (Some(a), Some(d)) = (stall_at, stall_for) {
        opts.stall = Some((a, d));
    }
    match cmd.as_str() {
        "kernel" => {
            let k = kernel::KernelFacts::read();
            let doc = serde_json::json!({
                "release": k.release,
                "available_congestion_control": k.available_cc,
                "missing_privileges": tcplab_emu::missing_privileges(),
            });
            println!("{doc}");
            ExitCode::SUCCESS
        }
        "reclaim" => {
            for n in netns::reclaim_stale() {
                println!("{n}");
            }
            ExitCode::SUCCESS
        }
        "check" | "run" => {
            let sc = match read_scenario(&scenario) {
                Ok(sc) => sc,
                Err(e) => {
                    eprintln!("tcplab-emu: error: {e}");
                    return ExitCode::from(2);
                }
            };
            let result = if cmd == "check" {
                tcplab_emu::check(&sc).map(|_| serde_json::json!({"ok": true}))
            } else {
                tcplab_emu::run(&sc, seed, &opts)
            };
            match result {
                Ok(doc) => {
                    let text = serde_json::to_string(&doc).expect("serialisable");
                    match out {
                        Some(p) => {
                            if let Err(e) = std::fs::write(&p, text) {
                                eprintln!("tcplab-emu: error: {p}: {e}");
                                return ExitCode::from(1);
                            }
                        }
                        None => println!("{text}"),
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("tcplab-emu: error: {e}");
                    let code = e.exit_code();
                    if let EmuError::Interrupted(_) = e {
                        return ExitCode::from(code.clamp(0, 255) as u8);
                    }
                    ExitCode::from(code as u8)
                }
            }
        }
        _ => usage(),
    }
}
